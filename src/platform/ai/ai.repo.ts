import { and, asc, desc, eq, inArray, or, type SQL, sql } from 'drizzle-orm';
import {
  readableLabelsCondition,
  visibleCommentsCondition,
  visibleFindingsCondition,
} from '../../access/access.repo.ts';
import type { FindingAccess } from '../../access/policy.ts';
import { type Database, type Db, rowsOf } from '../../db/client.ts';
import {
  aiConversations,
  aiMessages,
  aiUsage,
  assetGroups,
  comments,
  findingLabels,
  findingRelatedFiles,
  findings,
  labels,
  repositories,
} from '../../db/schema/index.ts';
import { escapeLike } from '../../strings.ts';
import { repositoriesRepo } from '../repositories/repositories.repo.ts';
import type { AssetGroup } from '../repositories/repositories.schemas.ts';

/** What a question asks for, in the forms retrieval matches. */
export interface RetrievalQuery {
  /** Words for full-text search (letters, digits, underscores only). */
  terms: string[];
  /** Finding numbers written as `#12`. */
  numbers: number[];
  /** File paths or file names (`src/Vault.sol`, `Vault.sol`). */
  paths: string[];
  /** Code identifiers (`withdrawAll`, `_balances`, `0xabc…`), matched as substrings. */
  identifiers: string[];
}

export interface RetrievedFinding {
  kind: 'finding';
  ref: string;
  number: number;
  title: string;
  description: string;
  status: string;
  severity: string;
  files: string[];
  labels: string[];
  assetGroup: string | null;
  duplicateOf: number | null;
  score: number;
}

export interface RetrievedComment {
  kind: 'comment';
  ref: string;
  findingNumber: number;
  content: string;
  createdAt: string;
  score: number;
}

export interface RetrievedScopeItem {
  kind: 'instructions' | 'asset_group' | 'safe_harbor';
  ref: string;
  title: string;
  text: string;
  score: number;
}

export type RetrievedItem = RetrievedFinding | RetrievedComment | RetrievedScopeItem;

/** Scores of exact matches; full-text ranks are below 1, so exact matches come first. */
const NUMBER_MATCH = 10;
const PATH_MATCH = 5;
const IDENTIFIER_MATCH = 2;

const SEVERITY_RANK = sql`array_position('{gas_optimization,informational,low,medium,high,critical}'::text[], ${findings.severity})`;

function tsQuery(terms: string[]): SQL | null {
  if (terms.length === 0) return null;
  return sql`to_tsquery('english', ${terms.join(' | ')})`;
}

function anyContains(text: SQL, needles: string[]): SQL {
  if (needles.length === 0) return sql`false`;
  return sql`(${sql.join(
    needles.map((n) => sql`strpos(lower(${text}), ${n.toLowerCase()}) > 0`),
    sql` or `,
  )})`;
}

function pathMatches(column: SQL, paths: string[]): SQL {
  if (paths.length === 0) return sql`false`;
  return sql`(${sql.join(
    paths.map((p) => sql`lower(${column}) like ${`%${escapeLike(p.toLowerCase())}%`} escape '\\'`),
    sql` or `,
  )})`;
}

function rank(document: SQL, query: SQL | null): SQL {
  return query ? sql`ts_rank(${document}, ${query})` : sql`0`;
}

export function createAiRepo(database: Database) {
  const db: Db = database.db;

  return {
    /**
     * The findings of the repository the user may see, best matches first: exact finding
     * numbers, then file paths, identifiers and full-text rank over title, description, status,
     * severity, readable labels, asset group and file paths; ties by severity and recency.
     */
    async searchFindings(
      access: FindingAccess,
      repository: { id: string; companyId: string },
      query: RetrievalQuery,
      limit: number,
    ): Promise<RetrievedFinding[]> {
      const labelNames = sql`coalesce((select string_agg(${labels.name}, ' ' order by ${labels.name})
        from ${findingLabels} join ${labels} on ${labels.id} = ${findingLabels.labelId}
        where ${findingLabels.findingId} = ${findings.id} and ${readableLabelsCondition(access, repository)}), '')`;
      const filePaths = sql`coalesce((select string_agg(${findingRelatedFiles.path}, ' ' order by ${findingRelatedFiles.path})
        from ${findingRelatedFiles} where ${findingRelatedFiles.findingId} = ${findings.id}), '')`;
      const groupName = sql`coalesce((select ${assetGroups.name} from ${assetGroups} where ${assetGroups.id} = ${findings.assetGroupId}), '')`;
      const document = sql`(setweight(to_tsvector('english', ${findings.title}), 'A')
        || setweight(to_tsvector('english', ${findings.description}), 'B')
        || to_tsvector('english', ${findings.status} || ' ' || replace(${findings.status}, '_', ' ') || ' ' || ${findings.severity}
          || ' ' || ${labelNames} || ' ' || ${groupName} || ' ' || regexp_replace(${filePaths}, '[/._-]', ' ', 'g')))`;
      const labelArray = sql`coalesce((select array_agg(${labels.name} order by ${labels.name})
        from ${findingLabels} join ${labels} on ${labels.id} = ${findingLabels.labelId}
        where ${findingLabels.findingId} = ${findings.id} and ${readableLabelsCondition(access, repository)}), '{}'::text[])`;
      const fileArray = sql`coalesce((select array_agg(distinct ${findingRelatedFiles.path})
        from ${findingRelatedFiles} where ${findingRelatedFiles.findingId} = ${findings.id}), '{}'::text[])`;
      const numberMatch =
        query.numbers.length > 0 ? sql`(${inArray(findings.number, query.numbers)})` : sql`false`;
      const pathMatch = sql`(exists (select 1 from ${findingRelatedFiles}
          where ${findingRelatedFiles.findingId} = ${findings.id}
            and ${pathMatches(sql`${findingRelatedFiles.path}`, query.paths)})
        or ${pathMatches(sql`coalesce(${findings.location}->>'file', '')`, query.paths)})`;
      const identifierMatch = anyContains(
        sql`(${findings.title} || ' ' || ${findings.description})`,
        query.identifiers,
      );
      const score = sql<number>`(${rank(document, tsQuery(query.terms))}
        + case when ${numberMatch} then ${NUMBER_MATCH} else 0 end
        + case when ${pathMatch} then ${PATH_MATCH} else 0 end
        + case when ${identifierMatch} then ${IDENTIFIER_MATCH} else 0 end)::float8`;

      const rows = await db
        .select({
          id: findings.id,
          number: findings.number,
          title: findings.title,
          description: findings.description,
          status: findings.status,
          severity: findings.severity,
          duplicateOf: findings.duplicateOf,
          location: findings.location,
          assetGroup: sql<string>`${groupName}`,
          // Nested so that drizzle keeps the table names on the columns of the subqueries.
          labels: sql<string[]>`${labelArray}`,
          files: sql<string[]>`${fileArray}`,
          score: score.mapWith(Number),
        })
        .from(findings)
        .where(and(eq(findings.repositoryId, repository.id), visibleFindingsCondition(access)))
        .orderBy(desc(score), desc(SEVERITY_RANK), desc(findings.number))
        .limit(limit);

      // Duplicate roots are named only when the user may see them too.
      const rootIds = [...new Set(rows.map((r) => r.duplicateOf).filter((id): id is string => id !== null))];
      const roots =
        rootIds.length === 0
          ? []
          : await db
              .select({ id: findings.id, number: findings.number })
              .from(findings)
              .where(and(inArray(findings.id, rootIds), visibleFindingsCondition(access)));
      const rootNumber = new Map(roots.map((r) => [r.id, r.number]));

      return rows.map((r) => {
        const files = [...r.files];
        if (r.location?.file && !files.includes(r.location.file)) files.push(r.location.file);
        return {
          kind: 'finding' as const,
          ref: `#${r.number}`,
          number: r.number ?? 0,
          title: r.title,
          description: r.description,
          status: r.status,
          severity: r.severity,
          files,
          labels: r.labels ?? [],
          assetGroup: r.assetGroup || null,
          duplicateOf: r.duplicateOf ? (rootNumber.get(r.duplicateOf) ?? null) : null,
          score: r.score,
        };
      });
    },

    /** The titles of the given findings the user may see (to widen a question about `#12`). */
    async findingTitles(access: FindingAccess, repositoryId: string, numbers: number[]): Promise<string[]> {
      if (numbers.length === 0) return [];
      const rows = await db
        .select({ title: findings.title })
        .from(findings)
        .where(
          and(
            eq(findings.repositoryId, repositoryId),
            inArray(findings.number, numbers),
            visibleFindingsCondition(access),
          ),
        );
      return rows.map((r) => r.title);
    },

    /**
     * Comments the user may read (on findings the user may see) that match the question: by
     * full-text rank of their content, by the finding number, or by an identifier or path in them.
     */
    async searchComments(
      access: FindingAccess,
      repositoryId: string,
      query: RetrievalQuery,
      limit: number,
    ): Promise<RetrievedComment[]> {
      const ts = tsQuery(query.terms);
      const numberMatch =
        query.numbers.length > 0 ? sql`(${inArray(findings.number, query.numbers)})` : sql`false`;
      const textMatch = anyContains(sql`${comments.content}`, [...query.identifiers, ...query.paths]);
      const score = sql<number>`(${rank(sql`to_tsvector('english', ${comments.content})`, ts)}
        + case when ${numberMatch} then ${NUMBER_MATCH} else 0 end
        + case when ${textMatch} then ${IDENTIFIER_MATCH} else 0 end)::float8`;
      const matches = or(
        ts ? sql`to_tsvector('english', ${comments.content}) @@ ${ts}` : undefined,
        numberMatch,
        textMatch,
      ) as SQL;
      const rows = await db
        .select({
          id: comments.id,
          number: findings.number,
          content: comments.content,
          createdAt: comments.createdAt,
          score: score.mapWith(Number),
        })
        .from(comments)
        .innerJoin(findings, eq(findings.id, comments.findingId))
        .where(
          and(
            eq(findings.repositoryId, repositoryId),
            visibleFindingsCondition(access),
            visibleCommentsCondition(access),
            matches,
          ),
        )
        .orderBy(desc(score), desc(comments.createdAt))
        .limit(limit);
      return rows.map((r) => ({
        kind: 'comment' as const,
        ref: `#${r.number}`,
        findingNumber: r.number ?? 0,
        content: r.content,
        createdAt: r.createdAt.toISOString(),
        score: r.score,
      }));
    },

    /**
     * The repository's scope as documents (instructions, each asset group with its assets and
     * rewards, the safe harbor), each with its full-text rank against the question. Everyone who
     * may see the repository may read them.
     */
    async scopeItems(repositoryId: string, query: RetrievalQuery): Promise<RetrievedScopeItem[]> {
      const [repository] = await db
        .select({ instructions: repositories.instructions })
        .from(repositories)
        .where(eq(repositories.id, repositoryId));
      // The same asset groups and safe harbor the repository's page shows.
      const structures = await repositoriesRepo(db).loadStructures([repositoryId]);
      const groups = structures.groups.get(repositoryId) ?? [];
      const harbor = structures.harbors.get(repositoryId);

      const items: Array<Omit<RetrievedScopeItem, 'score'>> = [];
      if (repository?.instructions.trim()) {
        items.push({
          kind: 'instructions',
          ref: 'instructions',
          title: 'Instructions of the repository',
          text: repository.instructions,
        });
      }
      const assetLines = (list: AssetGroup['assets']) =>
        list.map((a) => `Asset ${a.name}${a.reference ? ` (${a.reference})` : ''}: ${a.description}`);
      const pushGroup = (name: string, lines: string[]) =>
        items.push({
          kind: 'asset_group',
          ref: `asset group "${name}"`,
          title: `Asset group ${name}`,
          text: lines.join('\n'),
        });
      for (const g of groups) {
        pushGroup(g.name, [
          g.outOfScope ? 'Out of scope.' : 'In scope.',
          ...(g.description ? [g.description] : []),
          ...g.rewards.map((r) => `Reward: ${r.minReward} to ${r.maxReward}.`),
          ...assetLines(g.assets),
        ]);
        // A sub-group has no scope or rewards of its own: it is in scope when its group is.
        for (const sub of g.subGroups) {
          pushGroup(sub.name, [
            g.outOfScope ? 'Out of scope.' : 'In scope.',
            `Sub-group of "${g.name}".`,
            ...(sub.description ? [sub.description] : []),
            ...assetLines(sub.assets),
          ]);
        }
      }
      if (harbor) {
        const lines = [
          harbor.description,
          `Reward: ${harbor.reward}. Cap: ${harbor.cap}.`,
          ...harbor.returnAddresses.map((a) => `Return address: ${a.address}`),
          ...harbor.assets.map((a) => `Asset ${a.name}: ${a.description}`),
        ];
        items.push({ kind: 'safe_harbor', ref: 'safe harbor', title: 'Safe harbor', text: lines.join('\n') });
      }
      if (items.length === 0) return [];

      // Rank the documents in one statement: full-text rank plus path and identifier matches.
      const ts = tsQuery(query.terms);
      const exact = [...query.paths, ...query.identifiers].map((n) => n.toLowerCase());
      const docs = sql.join(
        items.map((it) => sql`${`${it.title}\n${it.text}`}`),
        sql`, `,
      );
      const ranked = rowsOf<{ i: number | string; score: number | string }>(
        await db.execute(sql`select d.i, (${rank(sql`to_tsvector('english', d.doc)`, ts)})::float8 as score
          from unnest(array[${docs}]::text[]) with ordinality as d(doc, i)`),
      ).map((r) => ({ i: Number(r.i), score: Number(r.score) }));
      const scoreOf = new Map(ranked.map((r) => [r.i - 1, r.score]));
      return items.map((it, i) => {
        const haystack = `${it.title}\n${it.text}`.toLowerCase();
        const bonus = exact.some((n) => haystack.includes(n)) ? IDENTIFIER_MATCH : 0;
        return { ...it, score: (scoreOf.get(i) ?? 0) + bonus };
      });
    },

    async findConversation(id: string) {
      const [row] = await db.select().from(aiConversations).where(eq(aiConversations.id, id));
      return row ?? null;
    },

    /** Creates the conversation unless it exists; returns the stored row either way. */
    async ensureConversation(id: string, repositoryId: string, userId: string) {
      await db.insert(aiConversations).values({ id, repositoryId, userId }).onConflictDoNothing();
      const [row] = await db.select().from(aiConversations).where(eq(aiConversations.id, id));
      if (!row) throw new Error(`conversation ${id} vanished after creation`);
      return row;
    },

    /** The newest messages of a conversation first. */
    async recentMessages(conversationId: string, limit: number) {
      return db
        .select()
        .from(aiMessages)
        .where(eq(aiMessages.conversationId, conversationId))
        .orderBy(desc(aiMessages.createdAt), desc(aiMessages.id))
        .limit(limit);
    },

    async messages(conversationId: string) {
      return db
        .select()
        .from(aiMessages)
        .where(eq(aiMessages.conversationId, conversationId))
        .orderBy(asc(aiMessages.createdAt), asc(aiMessages.role));
    },

    /** Stores a question and its answer together (the answer one millisecond later, for order). */
    async addTurn(
      conversationId: string,
      question: { content: string; metadata: Record<string, unknown> },
      answer: { content: string; metadata: Record<string, unknown> },
    ): Promise<void> {
      const at = new Date();
      await db.insert(aiMessages).values([
        {
          conversationId,
          role: 'user',
          content: question.content,
          metadata: question.metadata,
          createdAt: at,
        },
        {
          conversationId,
          role: 'assistant',
          content: answer.content,
          metadata: answer.metadata,
          createdAt: new Date(at.getTime() + 1),
        },
      ]);
    },

    /** Tokens the company spent in the month starting at `month` (YYYY-MM-01). */
    async monthlyTokens(companyId: string, month: string): Promise<number> {
      const [row] = await db
        .select({ total: sql<number>`(${aiUsage.promptTokens} + ${aiUsage.completionTokens})::float8` })
        .from(aiUsage)
        .where(and(eq(aiUsage.companyId, companyId), eq(aiUsage.month, month)));
      return Number(row?.total ?? 0);
    },

    /**
     * Reserves `tokens` of the company's month before a model call, in one statement: granted
     * while the month's total (answers and reservations in flight) is under `budget`, so that
     * questions asked at once see each other's reservations instead of all passing one check.
     * The reservation is counted as the call's prompt and completion tokens until
     * {@link settleUsage} or {@link releaseReservation} replaces it.
     */
    async reserveTokens(
      companyId: string,
      month: string,
      reserved: { promptTokens: number; completionTokens: number },
      budget: number,
    ): Promise<boolean> {
      const rows = await db
        .insert(aiUsage)
        .values({ companyId, month, ...reserved, requests: 0 })
        .onConflictDoUpdate({
          target: [aiUsage.companyId, aiUsage.month],
          set: {
            promptTokens: sql`${aiUsage.promptTokens} + ${reserved.promptTokens}`,
            completionTokens: sql`${aiUsage.completionTokens} + ${reserved.completionTokens}`,
          },
          setWhere: sql`${aiUsage.promptTokens} + ${aiUsage.completionTokens} < ${budget}`,
        })
        .returning({ month: aiUsage.month });
      return rows.length > 0;
    },

    /**
     * Records one model call's tokens in the company's month (atomic under concurrency), in place
     * of the reservation made for it (none: nothing reserved).
     */
    async settleUsage(
      companyId: string,
      month: string,
      usage: { promptTokens: number; completionTokens: number },
      reserved: { promptTokens: number; completionTokens: number } = { promptTokens: 0, completionTokens: 0 },
    ): Promise<void> {
      const prompt = usage.promptTokens - reserved.promptTokens;
      const completion = usage.completionTokens - reserved.completionTokens;
      await db
        .insert(aiUsage)
        .values({ companyId, month, promptTokens: prompt, completionTokens: completion, requests: 1 })
        .onConflictDoUpdate({
          target: [aiUsage.companyId, aiUsage.month],
          set: {
            promptTokens: sql`${aiUsage.promptTokens} + ${prompt}`,
            completionTokens: sql`${aiUsage.completionTokens} + ${completion}`,
            requests: sql`${aiUsage.requests} + 1`,
          },
        });
    },

    /** Gives back a reservation whose model call did not answer. */
    async releaseReservation(
      companyId: string,
      month: string,
      reserved: { promptTokens: number; completionTokens: number },
    ): Promise<void> {
      await db
        .update(aiUsage)
        .set({
          promptTokens: sql`greatest(${aiUsage.promptTokens} - ${reserved.promptTokens}, 0)`,
          completionTokens: sql`greatest(${aiUsage.completionTokens} - ${reserved.completionTokens}, 0)`,
        })
        .where(and(eq(aiUsage.companyId, companyId), eq(aiUsage.month, month)));
    },
  };
}

export type AiRepo = ReturnType<typeof createAiRepo>;
