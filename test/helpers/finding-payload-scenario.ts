import type { FindingAccess } from '../../src/access/policy.ts';
import { assetGroups, assets, findingLabels, safeHarbors } from '../../src/db/schema/index.ts';
import type { TestApp } from './app.ts';
import { buildComment, buildFinding, buildLabel, buildRepositoryTeam } from './factories.ts';

/**
 * A repository with every part a finding's payload has: labels a reviewer may and may not read,
 * an asset group with sub-groups and assets, a safe harbor with more assets than the finding
 * names, related files with and without lines, a note, a reward, an assignee, a comment, and a
 * duplicate group whose members belong to two reviewers.
 */
export async function payloadScenario(t: TestApp) {
  const team = await buildRepositoryTeam(t);
  const { repository } = team;
  const db = t.container.database.db;
  const open = await buildLabel(t, {
    repositoryId: repository.id,
    name: 'b-open',
    reviewerRead: true,
    archivedAt: new Date('2026-03-04T05:06:07.891Z'),
  });
  const secret = await buildLabel(t, { repositoryId: repository.id, name: 'a-secret', reviewerRead: false });
  const harborAssets = [
    { id: '00000000-0000-4000-8000-00000000000a', name: 'Vault', description: 'The vault.', extra: 'x' },
    { id: '00000000-0000-4000-8000-00000000000b', name: 'Router', description: 'The router.' },
    { id: '00000000-0000-4000-8000-00000000000c', name: 'Oracle', description: 'The oracle.' },
  ];
  await db.insert(safeHarbors).values({ repositoryId: repository.id, assets: harborAssets });
  const [group] = await db
    .insert(assetGroups)
    .values({
      repositoryId: repository.id,
      name: 'Core',
      description: 'Core contracts.',
      rewards: [{ minReward: '10', maxReward: '100' }],
    })
    .returning();
  const [later, earlier] = await db
    .insert(assetGroups)
    .values([
      { repositoryId: repository.id, parentId: group!.id, name: 'Later', position: 2 },
      { repositoryId: repository.id, parentId: group!.id, name: 'Earlier', position: 1 },
    ])
    .returning();
  await db.insert(assets).values([
    { assetGroupId: group!.id, name: 'Token', reference: '0xtoken' },
    { assetGroupId: group!.id, name: 'Bridge', description: 'The bridge.', reference: '0xbridge' },
    { assetGroupId: earlier!.id, name: 'Pool', reference: '0xpool' },
  ]);
  const root = await buildFinding(t, {
    repositoryId: repository.id,
    title: 'Root',
    description: 'Reentrancy "in" withdraw\n\ttab é ✓',
    createdBy: team.reviewer.id,
    assignedTo: team.judge.id,
    note: 'Judges only.',
    reward: '12.5',
    fixedBy: ['abc123'],
    category: 'reentrancy',
    assetGroupId: group!.id,
    safeHarborAssetIds: [harborAssets[2]!.id, harborAssets[0]!.id],
    duplicateGroupDescription: 'Same withdraw bug.',
    files: [
      { path: 'b.sol', startLine: 3, endLine: 9, language: 'solidity', relevantContent: 'call{value: x}' },
      { path: 'a.sol' },
    ],
  });
  const own = await buildFinding(t, {
    repositoryId: repository.id,
    title: 'Own duplicate',
    createdBy: team.reviewer.id,
    duplicateOf: root.id,
    status: 'duplicate',
  });
  const others = await buildFinding(t, {
    repositoryId: repository.id,
    title: 'Other duplicate',
    createdBy: team.otherReviewer.id,
    duplicateOf: root.id,
    status: 'duplicate',
  });
  await db.insert(findingLabels).values([
    { findingId: root.id, labelId: open.id },
    { findingId: root.id, labelId: secret.id },
  ]);
  await buildComment(t, { findingId: root.id, authorId: team.judge.id, content: 'Confirmed.' });
  return {
    team,
    repository,
    root,
    own,
    others,
    open,
    secret,
    group: group!,
    later: later!,
    earlier: earlier!,
  };
}

export type PayloadScenario = Awaited<ReturnType<typeof payloadScenario>>;

/**
 * The access of the scenario's judge, as the access service loads it (a judge of the repository,
 * in no company): for calling the payload's repository functions directly.
 */
export function judgeAccess(s: PayloadScenario): FindingAccess {
  return {
    userId: s.team.judge.id,
    readAll: false,
    platformAdmin: false,
    companyIds: [],
    managedCompanyIds: [],
    memberships: new Map([
      [s.repository.id, { role: 'judge', showAllFindings: false, companyId: s.repository.companyId }],
    ]),
  };
}
