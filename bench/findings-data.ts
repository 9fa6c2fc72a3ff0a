/**
 * The data set of the findings benchmarks: `companies` companies (default 100), 5,000 users, `repositories`
 * repositories (10 per company, 30 members each, 5 labels each) and `findings` findings spread
 * evenly over them, with labels, related files, comments of every visibility and read markers.
 * One finding in ten is a duplicate, in groups of three (a finding and the next two numbers of its
 * repository), as a judge marks them. Four findings in ten carry a label, labels 0–3 of their
 * repository in turn by number (label 4 is on none).
 * Three personas: `md5('persona-member')` (member of company `md5('c1')`, its 10 repositories),
 * `md5('persona-reviewer')` (reviewer on 100 repositories, judge of 10) and `md5('persona-reader')`
 * (`read_all_companies`). Ids are `md5('<kind><n>')::uuid`, so other scripts can name rows.
 * Used by bench/findings.ts, bench/api.ts and bench/api-traffic.ts.
 */
import { sql } from 'drizzle-orm';
import type { UserActor } from '../src/auth/actor.ts';
import type { Db } from '../src/db/client.ts';
import { refreshCommentStateSql } from '../src/platform/comments/comments.repo.ts';
import { findingBodyTriggers } from '../src/platform/findings/finding-bodies.source.ts';

/**
 * Triggers the data set turns off while it loads: the generated finding-body triggers (each
 * statement over a million rows would rebuild a million bodies; they are built once at the end,
 * as the migration does) and the label change log (generated labels were never "added" by anyone).
 */
function bulkLoadTriggers(): Array<{ table: string; name: string }> {
  return [
    ...findingBodyTriggers().map(({ table, name }) => ({ table, name })),
    { table: 'finding_labels', name: 'finding_labels_events_insert' },
  ];
}

async function setTriggers(run: FindingsDataSetOptions['run'], enabled: boolean): Promise<void> {
  for (const t of bulkLoadTriggers())
    await run(`alter table ${t.table} ${enabled ? 'enable' : 'disable'} trigger ${t.name}`);
}

/**
 * Runs `load` (bulk statements on an empty, migrated database) with the body triggers and the
 * label change log off, then builds every finding body in one statement, as the migration does.
 */
export async function bulkLoad(
  run: FindingsDataSetOptions['run'],
  timed: FindingsDataSetOptions['timed'],
  load: () => Promise<void>,
): Promise<void> {
  await setTriggers(run, false);
  await load();
  await setTriggers(run, true);
  // Statistics first: the bodies' view looks up related files, labels and members per finding.
  await timed('analyze', () => run('analyze'));
  await timed('finding bodies', () =>
    run(`insert into finding_bodies (finding_id, body) select finding_id, body from finding_body_source
      on conflict (finding_id) do update set body = excluded.body`),
  );
}

export interface FindingsDataSetOptions {
  /** Runs one SQL text on the (empty, migrated) database. */
  run: (text: string, values?: unknown[]) => Promise<unknown>;
  db: Db;
  findings: number;
  repositories: number;
  /** Companies of ten repositories each (default 100; the repositories past them have none). */
  companies?: number;
  log: (message: string) => void;
  timed: <T>(label: string, fn: () => Promise<T>) => Promise<T>;
}

export async function generateFindingsDataSet(options: FindingsDataSetOptions): Promise<void> {
  const { run, db, findings, repositories, log, timed } = options;
  const companies = options.companies ?? 100;
  const STATUSES = `array['new','in_review','disputed','rejected','spam','duplicate','confirmed','acknowledged','fixed','withdrawn']`;
  const SEVERITIES = `array['critical','high','medium','low','informational','gas_optimization']`;
  log(`generating ${findings.toLocaleString('en')} findings over ${repositories} repositories`);
  await bulkLoad(run, timed, async () => {
    await timed('companies, users, repositories, members, labels', async () => {
      await run(`insert into companies (id, name, handle)
      select md5('c'||g)::uuid, 'Bench company '||g, 'bench-co-'||g from generate_series(1, ${companies}) g`);
      await run(`insert into users (id, username, name, reputation)
      select md5('u'||g)::uuid, 'bench_user_'||lpad(((g * 7907) % 5000)::text, 4, '0')||'_'||g, 'Bench User '||g,
        case when g % 11 = 0 then 0 else (g * 7919) % 1000 end
      from generate_series(1, 5000) g`);
      await run(`insert into repositories (id, company_id, name, show_all_findings, finding_seq)
      select md5('r'||g)::uuid, md5('c'||((g - 1) / 10 + 1))::uuid, 'bench-repo-'||g, g % 3 = 0, ${findings / repositories}
      from generate_series(1, ${repositories}) g`);
      await run(`insert into repository_members (repository_id, user_id, role)
      select md5('r'||r)::uuid, md5('u'||(((r * 30 + k) % 5000) + 1))::uuid, case when k = 0 then 'judge' when k = 1 then 'admin' else 'reviewer' end
      from generate_series(1, ${repositories}) r, generate_series(0, 29) k on conflict do nothing`);
      await run(`insert into labels (id, repository_id, company_id, name, reviewer_use)
      select md5('l'||((r - 1) * 5 + k + 1))::uuid, md5('r'||r)::uuid, md5('c'||((r - 1) / 10 + 1))::uuid, 'label-'||k, k < 2
      from generate_series(1, ${repositories}) r, generate_series(0, 4) k`);
    });
    await timed('findings', () =>
      run(`insert into findings (id, company_id, repository_id, number, published, title, description, status, severity,
        created_by, attributed_to, assigned_to, duplicate_of, reward, created_at, last_updated_at)
      select md5('f'||g)::uuid, md5('c'||((r - 1) / 10 + 1))::uuid, md5('r'||r)::uuid, n, true,
        'Finding '||n||': '||(array['reentrancy in withdraw','integer overflow in mint','missing access control',
          'unchecked return value','oracle manipulation','front-running of approve'])[g % 6 + 1],
        'Description of finding '||g||'. The function does not check its input.',
        case when n % 20 in (0, 19) then 'duplicate' else (${STATUSES})[(g * 31) % 10 + 1] end,
        (${SEVERITIES})[(g * 17) % 6 + 1],
        creator, creator,
        case when g % 7 = 0 then md5('u'||(((r * 30) % 5000) + 1))::uuid end,
        case when n % 20 = 19 then md5('f'||(g - ${repositories}))::uuid
          when n % 20 = 0 then md5('f'||(g - 2 * ${repositories}))::uuid end,
        case when g % 4 = 0 then null else ((g * 37) % 5000)::numeric end,
        timestamptz '2023-01-01' + g * interval '29 seconds' + (g % 1000) * interval '1 microsecond',
        timestamptz '2023-01-01' + g * interval '29 seconds' + ((g * 13) % 100000) * interval '1 minute'
      from (select g, ((g - 1) % ${repositories}) + 1 as r, (g - 1) / ${repositories} + 1 as n,
              md5('u'||((((((g - 1) % ${repositories}) + 1) * 30 + 2 + (g % 28)) % 5000) + 1))::uuid as creator
            from generate_series(1, ${findings}) g) s`),
    );
    await timed('labels, related files, comments', async () => {
      await run(`insert into finding_labels (finding_id, label_id)
      select md5('f'||g)::uuid, md5('l'||((((g - 1) % ${repositories})) * 5 + ((g - 1) / ${repositories}) % 5 + 1))::uuid
      from generate_series(1, ${findings}) g where ((g - 1) / ${repositories}) % 10 < 4`);
      await run(`insert into finding_related_files (finding_id, path, start_line, end_line, language)
      select md5('f'||g)::uuid, 'contracts/C'||(g % 200)||'.sol', g % 300, g % 300 + 5, 'solidity'
      from generate_series(1, ${findings}) g`);
      // Comments of every visibility on every third finding of the first 60 %, so that every
      // persona has commented findings; a second comment by another author on every 7th of those.
      await run(`insert into comments (finding_id, author_id, content, visibility, created_at)
      select md5('f'||(k * 3))::uuid, md5('u'||((k * 13) % 5000 + 1))::uuid, 'A comment',
        (array['public','public','private','internal','hidden'])[k % 5 + 1], now() - k * interval '1 second'
      from generate_series(1, ${findings / 5}) k`);
      await run(`insert into comments (finding_id, author_id, content, visibility, created_at)
      select md5('f'||(k * 3))::uuid, md5('u'||((k * 17) % 5000 + 1))::uuid, 'A reply',
        (array['public','private','public','internal','hidden'])[k % 5 + 1], now() - k * interval '1 second' + interval '5000 seconds'
      from generate_series(7, ${findings / 5}, 7) k`);
      // The per-visibility comment columns, as the comments module keeps them.
      await db.execute(
        refreshCommentStateSql(sql`exists (select 1 from comments c0 where c0.finding_id = f.id)`),
      );
    });

    // Personas: a company member (10 repositories), a reviewer on 100 repositories who judges 10 of
    // them, and a cross-company reader who sees all million findings.
    await run(`insert into users (id, username, name) values
    (md5('persona-member')::uuid, 'bench_member', 'Member'),
    (md5('persona-reviewer')::uuid, 'bench_reviewer', 'Reviewer'),
    (md5('persona-reader')::uuid, 'bench_reader', 'Reader')`);
    await run(
      `insert into company_members (company_id, user_id, role, joined_at) values (md5('c1')::uuid, md5('persona-member')::uuid, 'member', now())`,
    );
    await run(`insert into repository_members (repository_id, user_id, role)
    select md5('r'||r)::uuid, md5('persona-reviewer')::uuid, case when r % 100 = 1 then 'judge' else 'reviewer' end
    from generate_series(1, ${repositories}) r where r % 10 = 1`);
    await run(`update findings set created_by = md5('persona-reviewer')::uuid
    where id in (select md5('f'||g)::uuid from generate_series(1, ${findings}) g where g % 10 = 1 and g % 97 = 0)`);
    await run(
      `insert into platform_permissions (user_id, permission) values (md5('persona-reader')::uuid, 'read_all_companies')`,
    );
    // Read markers: the member and the reviewer read half of their commented findings at a time
    // that leaves some comments after it.
    await run(`insert into comment_reads (user_id, finding_id, read_at)
    select md5('persona-member')::uuid, f.id, now() - interval '20000 seconds'
    from findings f where f.company_id = md5('c1')::uuid and exists (select 1 from comments c where c.finding_id = f.id) and f.number % 2 = 0`);
    await run(`insert into comment_reads (user_id, finding_id, read_at)
    select md5('persona-reviewer')::uuid, f.id, now() - interval '20000 seconds'
    from findings f join repository_members m on m.repository_id = f.repository_id and m.user_id = md5('persona-reviewer')::uuid
    where exists (select 1 from comments c where c.finding_id = f.id) and f.number % 2 = 0`);
  });
  await timed('vacuum analyze', () => run('vacuum analyze'));
  // The loaded pages are written out now rather than by the checkpointer during the measurements.
  await timed('checkpoint', () => run('checkpoint'));
}

/** A statement sent through a pool while {@link captureStatements} records. */
export interface CapturedStatement {
  query: string;
  params: unknown[];
}

/**
 * Records the statements `run` sends through `pool`: Drizzle's, and the texts built once per shape
 * that plainRows runs (Drizzle's logger sees only the former). Wraps the pool's `query`.
 */
export function captureStatements(pool: { query: unknown }): {
  during<T>(run: () => Promise<T>): Promise<{ result: T; statements: CapturedStatement[] }>;
} {
  let statements: CapturedStatement[] | null = null;
  const poolQuery = (pool.query as (...args: unknown[]) => unknown).bind(pool);
  Reflect.set(pool, 'query', (config: unknown, ...rest: unknown[]) => {
    const c = config as { text?: unknown; values?: unknown[] } | null;
    if (statements && c && typeof c === 'object' && typeof c.text === 'string')
      statements.push({ query: c.text, params: c.values ?? [] });
    return poolQuery(config, ...rest);
  });
  return {
    async during(run) {
      const recorded: CapturedStatement[] = [];
      statements = recorded;
      try {
        return { result: await run(), statements: recorded };
      } finally {
        statements = null;
      }
    },
  };
}

/**
 * The member persona (a company member of `c1`, its 10 repositories) as the API authenticates it,
 * with its company's id.
 */
export async function memberPersona(pool: {
  query(text: string): Promise<{ rows: unknown[] }>;
}): Promise<{ actor: UserActor; companyId: string }> {
  const ids = (await pool.query(`select md5('persona-member')::uuid as member, md5('c1')::uuid as company`))
    .rows[0] as { member: string; company: string };
  return {
    actor: {
      kind: 'user',
      credentialId: 'bench-member',
      userId: ids.member,
      username: 'bench_member',
      companies: new Map([[ids.company, 'member']]),
      permissions: new Set(),
    },
    companyId: ids.company,
  };
}
