import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeLlmServer, startFakeLlmServer } from '../../../test/fakes/llm-server.ts';
import { createTestApp, sendJson, type TestApp } from '../../../test/helpers/app.ts';
import {
  addMember,
  buildFinding,
  buildLabel,
  buildRepository,
  buildRepositoryTeam,
  type TestUser,
} from '../../../test/helpers/factories.ts';
import { comments, findingLabels } from '../../db/schema/index.ts';

/**
 * For every role, planted unique markers of findings, labels and comments the role may not see
 * never reach the model's request nor the answer, with a model (a worst-case fake that repeats
 * all the data it was given) and without one. Markers the role may see do reach them (so that
 * the absence of the others means something).
 */

const marker = (name: string) => `canary${name}${randomBytes(5).toString('hex')}`;

type Role =
  | 'reviewer'
  | 'showAllReviewer'
  | 'judge'
  | 'triager'
  | 'admin'
  | 'client'
  | 'companyUser'
  | 'platformAdmin';
const ROLES: Role[] = [
  'reviewer',
  'showAllReviewer',
  'judge',
  'triager',
  'admin',
  'client',
  'companyUser',
  'platformAdmin',
];

let llm: FakeLlmServer;
let withModel: TestApp;
let withoutModel: TestApp;
const tokens = {} as Record<Role, string>;
let repoId: string;
let showAllRepoId: string;
/** Marker → the roles that may see it. */
const planted = new Map<string, Set<Role>>();

beforeAll(async () => {
  llm = await startFakeLlmServer();
  // The worst model: it repeats everything it was given, instructions and data alike.
  llm.fallback = (request) => ({
    kind: 'content',
    content: (request.body.messages ?? []).map((m) => m.content ?? '').join('\n'),
  });
  withModel = await createTestApp({
    env: {
      VIGIL_LLM_BASE_URL: llm.baseUrl,
      VIGIL_LLM_MODEL: 'fake-model',
      VIGIL_OUTBOUND_ALLOW: '127.0.0.1/32',
      VIGIL_AI_RATE_LIMIT_PER_MINUTE: '1000',
    },
  });
  withoutModel = await createTestApp({
    shareDatabaseWith: withModel,
    env: { VIGIL_AI_RATE_LIMIT_PER_MINUTE: '1000' },
  });
  const t = withModel;
  const team = await buildRepositoryTeam(t, { instructions: 'Look for reentrancy in the vault.' });
  repoId = team.repository.id;
  const all: Role[] = [...ROLES];
  const except = (...roles: Role[]) => new Set(all.filter((r) => !roles.includes(r)));
  const only = (...roles: Role[]) => new Set(roles);

  Object.assign(tokens, {
    reviewer: team.reviewer.token,
    judge: team.judge.token,
    triager: team.triager.token,
    admin: team.admin.token,
    client: team.client.token,
    companyUser: team.companyUser.token,
    platformAdmin: t.adminToken,
  });
  // A reviewer of a repository whose showAllFindings is on, asking there (same plants, other repo).
  const showAll = await buildRepository(t, { companyId: team.company.id, showAllFindings: true });
  showAllRepoId = showAll.id;
  await addMember(t, showAll.id, team.otherReviewer.id, 'reviewer');
  tokens.showAllReviewer = team.otherReviewer.token;

  async function plantIn(
    repository: typeof team.repository,
    reviewer: TestUser,
    other: TestUser,
    tag: string,
  ) {
    const own = await buildFinding(t, {
      repositoryId: repository.id,
      title: `Reentrancy in Vault.withdraw ${marker(`${tag}ownfinding`)}`,
      description: 'The vault sends ether before updating balances (reentrancy).',
      severity: 'high',
      createdBy: reviewer.id,
    });
    const othersTitle = marker(`${tag}othersfinding`);
    const others = await buildFinding(t, {
      repositoryId: repository.id,
      title: `Reentrancy in Vault.deposit ${othersTitle}`,
      description: 'Another reentrancy in the vault.',
      severity: 'critical',
      createdBy: other.id,
    });
    const draftTitle = marker(`${tag}draft`);
    await buildFinding(t, {
      repositoryId: repository.id,
      title: `Reentrancy draft ${draftTitle}`,
      description: 'reentrancy vault',
      published: false,
      createdBy: other.id,
    });
    const hiddenLabel = await buildLabel(t, {
      repositoryId: repository.id,
      name: marker(`${tag}hiddenlabel`),
      reviewerRead: false,
    });
    const openLabel = await buildLabel(t, {
      repositoryId: repository.id,
      name: marker(`${tag}openlabel`),
      reviewerRead: true,
    });
    await t.container.database.db.insert(findingLabels).values([
      { findingId: own.id, labelId: hiddenLabel.id },
      { findingId: own.id, labelId: openLabel.id },
    ]);
    const comment = async (findingId: string, visibility: 'public' | 'private' | 'internal' | 'hidden') => {
      const m = marker(`${tag}${visibility}comment`);
      await t.container.database.db
        .insert(comments)
        .values({ findingId, authorId: other.id, content: `About the reentrancy: ${m}`, visibility });
      return m;
    };
    return {
      own,
      others,
      othersTitle,
      draftTitle,
      hiddenLabel: hiddenLabel.name,
      openLabel: openLabel.name,
      publicOnOwn: await comment(own.id, 'public'),
      privateOnOwn: await comment(own.id, 'private'),
      internalOnOwn: await comment(own.id, 'internal'),
      hiddenOnOwn: await comment(own.id, 'hidden'),
      publicOnOthers: await comment(others.id, 'public'),
    };
  }

  // The main repository: the reviewer filed `own`; the other reviewer filed `others`.
  const main = await plantIn(team.repository, team.reviewer, team.otherReviewer, 'm');
  const sees = (roles: Set<Role>) => new Set([...roles].filter((r) => r !== 'showAllReviewer'));
  planted.set(main.othersTitle, sees(except('reviewer')));
  planted.set(main.draftTitle, new Set());
  planted.set(main.hiddenLabel, sees(except('reviewer')));
  planted.set(main.openLabel, sees(except()));
  planted.set(main.publicOnOwn, sees(except()));
  // private: the finding's author, company users, judges, triagers, admins (not the client).
  planted.set(
    main.privateOnOwn,
    only('reviewer', 'judge', 'triager', 'admin', 'companyUser', 'platformAdmin'),
  );
  planted.set(main.internalOnOwn, only('admin', 'companyUser', 'platformAdmin'));
  planted.set(main.hiddenOnOwn, only('admin', 'platformAdmin'));
  planted.set(main.publicOnOthers, sees(except('reviewer')));

  // The showAllFindings repository: its reviewer sees every finding there, but labels stay reviewer-filtered.
  const sa = await plantIn(showAll, team.otherReviewer, team.reviewer, 's');
  planted.set(sa.othersTitle, only('showAllReviewer', 'companyUser', 'platformAdmin'));
  planted.set(sa.draftTitle, new Set());
  planted.set(sa.hiddenLabel, only('companyUser', 'platformAdmin'));
  planted.set(sa.openLabel, only('showAllReviewer', 'companyUser', 'platformAdmin'));
  planted.set(sa.publicOnOwn, only('showAllReviewer', 'companyUser', 'platformAdmin'));
  planted.set(sa.privateOnOwn, only('showAllReviewer', 'companyUser', 'platformAdmin'));
  planted.set(sa.internalOnOwn, only('companyUser', 'platformAdmin'));
  planted.set(sa.hiddenOnOwn, only('platformAdmin'));
  planted.set(sa.publicOnOthers, only('showAllReviewer', 'companyUser', 'platformAdmin'));

  // Another company's repository with the same words: nobody asking here sees it.
  const elsewhere = await buildRepository(t);
  const foreign = marker('foreign');
  await buildFinding(t, {
    repositoryId: elsewhere.id,
    title: `Reentrancy ${foreign}`,
    description: 'reentrancy vault',
  });
  planted.set(foreign, new Set());
});

afterAll(async () => {
  await withoutModel?.close();
  await withModel?.close();
  await llm?.close();
});

const QUESTION = 'Which reentrancy findings and comments exist in the vault? Show labels too.';

function repositoryOf(role: Role): string {
  return role === 'showAllReviewer' ? showAllRepoId : repoId;
}

function check(role: Role, text: string, where: string): void {
  for (const [m, roles] of planted) {
    // A marker of the other repository is out of this question's scope whoever asks.
    const inScope = m.includes(role === 'showAllReviewer' ? 'canarys' : 'canarym');
    const visible = roles.has(role) && (inScope || roles.size === 0);
    if (visible) expect(text, `${role} should see ${m} in ${where}`).toContain(m);
    else expect(text, `${role} must not see ${m} in ${where}`).not.toContain(m);
  }
}

describe('the assistant never passes on what the caller may not see', () => {
  for (const role of ROLES) {
    it(`${role}: with a model, neither the model request nor the answer holds invisible markers`, async () => {
      const before = llm.requests.length;
      const res = await sendJson<string>(
        withModel,
        tokens[role],
        'POST',
        `/api/v0/repositories/${repositoryOf(role)}/ai/ask`,
        {
          prompt: QUESTION,
        },
      );
      expect(res.status).toBe(200);
      expect(llm.requests.length).toBe(before + 1);
      const request = llm.requests[before]!;
      expect(request.body.stream).toBe(false);
      check(role, request.raw, 'the model request');
      check(role, res.body, 'the answer');
    });

    it(`${role}: without a model, the retrieval answer holds no invisible markers`, async () => {
      const res = await sendJson<string>(
        withoutModel,
        tokens[role],
        'POST',
        `/api/v0/repositories/${repositoryOf(role)}/ai/ask`,
        {
          prompt: QUESTION,
        },
      );
      expect(res.status).toBe(200);
      expect(res.body).toContain('No language model is configured');
      // The retrieval answer lists findings and comments but not every label; check what it lists.
      for (const [m, roles] of planted) {
        if (!roles.has(role)) expect(res.body, `${role} must not see ${m}`).not.toContain(m);
      }
    });
  }
});
