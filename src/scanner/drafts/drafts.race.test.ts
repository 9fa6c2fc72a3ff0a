import { randomBytes } from 'node:crypto';
import { and, eq, inArray, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { sharedTestApp } from '../../../test/helpers/app.ts';
import {
  buildCompanyWorld,
  buildRepository,
  buildScannerFinding,
  buildUser,
} from '../../../test/helpers/factories.ts';
import { type ConsoleSignIn, signInToConsole } from '../../../test/security/access-world.ts';
import { auditLog, findings, workspaces } from '../../db/schema/index.ts';

const t = sharedTestApp();

/** Rounds of each race: every round starts from fresh drafts. */
const ROUNDS = 20;

interface World {
  companyId: string;
  workspaceId: string;
  repositoryId: string;
  /** Two company managers, each in a console session of their own. */
  alice: ConsoleSignIn & { userId: string };
  bob: ConsoleSignIn & { userId: string };
}

let world: World;

beforeAll(async () => {
  const { company, manager } = await buildCompanyWorld(t);
  const second = await buildUser(t, { companyId: company.id, companyRole: 'manager' });
  const repository = await buildRepository(t, { companyId: company.id });
  const [workspace] = await t.container.database.db
    .insert(workspaces)
    .values({ companyId: company.id, name: 'race', prefix: '', repository: null })
    .returning();
  world = {
    companyId: company.id,
    workspaceId: workspace!.id,
    repositoryId: repository.id,
    alice: { ...(await signInToConsole(t, manager.token)), userId: manager.id },
    bob: { ...(await signInToConsole(t, second.token)), userId: second.id },
  };
});

/** `count` open drafts of the workspace, as a scan leaves them. */
async function openDrafts(count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const draft = await buildScannerFinding(t, {
      companyId: world.companyId,
      workspaceId: world.workspaceId,
      triageState: 'open',
      fingerprint: randomBytes(16).toString('hex'),
      ruleId: 'solidity.reentrancy',
    });
    ids.push(draft.id);
  }
  return ids;
}

function as(session: ConsoleSignIn, path: 'triage' | 'publish', payload: object) {
  return t.app.inject({
    method: 'POST',
    url: `/api/scanner/v1/drafts/${path}`,
    headers: {
      cookie: session.cookie,
      'x-csrf-token': session.csrfToken,
      'x-vigil-company': world.companyId,
    },
    payload,
  });
}

const dismiss = (session: ConsoleSignIn, draftIds: string[], reason = 'false_positive') =>
  as(session, 'triage', { draftIds, action: 'dismiss', reason });
const reopen = (session: ConsoleSignIn, draftIds: string[]) =>
  as(session, 'triage', { draftIds, action: 'reopen' });
const publish = (session: ConsoleSignIn, draftIds: string[]) =>
  as(session, 'publish', {
    repositoryId: world.repositoryId,
    drafts: draftIds.map((draftId) => ({ draftId, severity: 'high' })),
  });

async function statesOf(ids: string[]) {
  const rows = await t.container.database.db
    .select({
      id: findings.id,
      state: findings.triageState,
      reason: findings.dismissedReason,
      dismissedBy: findings.dismissedBy,
      publishedFindingId: findings.publishedFindingId,
    })
    .from(findings)
    .where(inArray(findings.id, ids));
  return new Map(rows.map((r) => [r.id, r]));
}

/** The audit entries about these drafts, by action then draft. */
async function auditOf(ids: string[]) {
  const rows = await t.container.database.db
    .select({ action: auditLog.action, performedBy: auditLog.performedBy, details: auditLog.details })
    .from(auditLog)
    .where(
      and(
        eq(auditLog.companyId, world.companyId),
        inArray(sql<string>`${auditLog.details}->>'draftId'`, ids),
      ),
    );
  const count = (action: string, id: string) =>
    rows.filter((r) => r.action === action && r.details.draftId === id).length;
  return { rows, count };
}

/** Findings filed from these drafts in the repository. */
async function findingsFiledFrom(ids: string[]) {
  const states = await statesOf(ids);
  const filed = [...states.values()].flatMap((s) => (s.publishedFindingId ? [s.publishedFindingId] : []));
  const rows = await t.container.database.db
    .select({ id: findings.id })
    .from(findings)
    .where(and(eq(findings.repositoryId, world.repositoryId), sql`${findings.sourceScanId} is null`));
  return { filed, inRepository: rows.map((r) => r.id) };
}

describe('two triagers racing on the same drafts', () => {
  it('one dismisses while the other publishes: the draft ends published, each change audited once', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const [draft] = await openDrafts(1);
      const [dismissed, published] = await Promise.all([
        dismiss(world.alice, [draft!]),
        publish(world.bob, [draft!]),
      ]);
      expect(published.statusCode, published.body).toBe(200);
      expect(published.json().items).toEqual([expect.objectContaining({ draftId: draft, created: true })]);
      // The dismissal either came first (200, then published over it) or found it published (409).
      expect([200, 409], dismissed.body).toContain(dismissed.statusCode);
      if (dismissed.statusCode === 409) expect(dismissed.json().code).toBe('CONFLICT');
      const state = (await statesOf([draft!])).get(draft!)!;
      expect(state.state).toBe('published');
      expect(state.publishedFindingId).toBe(published.json().items[0].findingId);
      const audit = await auditOf([draft!]);
      expect(audit.count('draft_published', draft!)).toBe(1);
      expect(audit.count('draft_dismissed', draft!)).toBe(dismissed.statusCode === 200 ? 1 : 0);
    }
  }, 120_000);

  it('both publish the same drafts at once: one finding each, the other answer created: false', async () => {
    const before = (await findingsFiledFrom([])).inRepository.length;
    const all: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const drafts = await openDrafts(2);
      all.push(...drafts);
      // Bob names them in the other order: the locks are still taken in id order.
      const [a, b] = await Promise.all([
        publish(world.alice, drafts),
        publish(world.bob, [...drafts].reverse()),
      ]);
      expect(a.statusCode, a.body).toBe(200);
      expect(b.statusCode, b.body).toBe(200);
      for (const draft of drafts) {
        const answers = [a, b].map(
          (r) =>
            (r.json().items as Array<{ draftId: string; findingId: string; created: boolean }>).find(
              (i) => i.draftId === draft,
            )!,
        );
        expect(answers.map((x) => x.created).sort()).toEqual([false, true]);
        expect(answers[0]!.findingId).toBe(answers[1]!.findingId);
        const audit = await auditOf([draft]);
        expect(audit.count('draft_published', draft)).toBe(1);
        const entry = audit.rows.find((r) => r.action === 'draft_published')!;
        const winner = answers[0]!.created ? world.alice : world.bob;
        expect(entry.performedBy).toBe(winner.userId);
      }
    }
    const { filed, inRepository } = await findingsFiledFrom(all);
    expect(new Set(filed).size).toBe(all.length);
    expect(inRepository.length - before).toBe(all.length);
    expect(inRepository).toEqual(expect.arrayContaining(filed));
  }, 120_000);

  it('bulk dismissals of overlapping sets: each draft dismissed once, by whoever came first', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const drafts = await openDrafts(5);
      const first = drafts.slice(0, 3);
      const second = drafts.slice(1);
      const [a, b] = await Promise.all([
        dismiss(world.alice, first, 'false_positive'),
        dismiss(world.bob, second, 'wont_fix'),
      ]);
      expect(a.statusCode, a.body).toBe(200);
      expect(b.statusCode, b.body).toBe(200);
      const states = await statesOf(drafts);
      const audit = await auditOf(drafts);
      expect(audit.rows).toHaveLength(drafts.length);
      for (const id of drafts) {
        const state = states.get(id)!;
        expect(state.state).toBe('dismissed');
        expect(audit.count('draft_dismissed', id)).toBe(1);
        const entry = audit.rows.find((r) => r.details.draftId === id)!;
        // The entry names the dismissal the draft keeps.
        expect(entry.performedBy).toBe(state.dismissedBy);
        expect(entry.details.reason).toBe(state.reason);
        expect(state.dismissedBy).toBe(
          state.reason === 'false_positive' ? world.alice.userId : world.bob.userId,
        );
      }
      // Both answers show the drafts as they are after both: dismissed.
      for (const res of [a, b])
        expect((res.json().items as Array<{ state: string }>).every((d) => d.state === 'dismissed')).toBe(
          true,
        );
    }
  }, 120_000);

  it('dismissals racing reopenings: every draft in one state, its audit entries alternating', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const drafts = await openDrafts(4);
      // Half start dismissed, so that both directions race.
      expect((await dismiss(world.alice, drafts.slice(0, 2))).statusCode).toBe(200);
      const answers = await Promise.all([
        dismiss(world.alice, drafts.slice(1), 'used_in_tests'),
        reopen(world.bob, drafts.slice(0, 3)),
        dismiss(world.bob, [drafts[0]!, drafts[3]!], 'wont_fix'),
      ]);
      for (const res of answers) expect(res.statusCode, res.body).toBe(200);
      const states = await statesOf(drafts);
      const audit = await auditOf(drafts);
      for (const id of drafts) {
        const state = states.get(id)!;
        expect(['open', 'dismissed']).toContain(state.state);
        // Every draft started open: dismissals and reopenings alternate from there.
        const net = audit.count('draft_dismissed', id) - audit.count('draft_reopened', id);
        expect(net, id).toBe(state.state === 'dismissed' ? 1 : 0);
        if (state.state === 'open') expect(state.reason).toBeNull();
        else expect(state.reason).not.toBeNull();
      }
    }
  }, 120_000);
});
