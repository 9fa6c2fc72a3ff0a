/**
 * The findings of `vigil seed demo`: filed by the reviewers, judged by the judge and the triager,
 * answered by the client, rewarded, and discussed in comments with replies and pings.
 */
import { eq } from 'drizzle-orm';
import type { FindingStatus } from '../access/rules.ts';
import type { UserActor } from '../auth/actor.ts';
import { findings } from '../db/schema/index.ts';
import type { CreateFinding, Finding } from '../platform/findings/findings.schemas.ts';
import { type DemoCast, PEOPLE, type PersonKey } from './seed-cast.ts';
import type { DemoLabels, DemoRepositories } from './seed-repositories.ts';

/** The findings the later steps judge and discuss, by what they are about. */
export interface DemoFindings {
  reentrancy: Finding;
  reentrancyDup: Finding;
  randomness: Finding;
  session: Finding;
  twoStep: Finding;
  spam: Finding;
  pragma: Finding;
  txOrigin: Finding;
  unchecked: Finding;
  sweep: Finding;
}

/** A related file of a finding. */
function file(p: string, start: number, end: number, relevantContent?: string) {
  return {
    path: p,
    lines: { start, end },
    language: 'solidity',
    ...(relevantContent ? { relevantContent } : {}),
  };
}

/** Findings of both repositories, filed by the reviewers, in their asset groups. */
export async function fileFindings(
  cast: DemoCast,
  { bounty, audit }: DemoRepositories,
  { needsPoc, frontend }: DemoLabels,
): Promise<DemoFindings> {
  const { services } = cast.container;
  const groupId = (repo: typeof bounty, name: string) => repo.assetGroups.find((g) => g.name === name)?.id;
  // Findings, filed by the reviewers.
  const reviewers = {
    kai: await cast.actorOf('kai'),
    amara: await cast.actorOf('amara'),
    tomas: await cast.actorOf('tomas'),
  };
  const file1 = (who: keyof typeof reviewers, repositoryId: string, input: CreateFinding) =>
    services.findings.createFinding(reviewers[who], repositoryId, input);
  const contracts = groupId(bounty, 'Smart contracts');
  const web = groupId(bounty, 'Web application');
  const core = groupId(audit, 'Core contracts');

  const reentrancy = await file1('kai', bounty.id, {
    title: 'Reentrancy in Vault.withdraw drains every deposit',
    description:
      '`withdraw` sends ETH with a low-level call before it clears `balances[msg.sender]`. A contract whose `receive` calls `withdraw` again is paid its balance once per re-entry and drains the Vault.\n\n**Fix:** clear the balance before the call (checks-effects-interactions) or add a reentrancy guard.',
    severity: 'critical',
    relatedFiles: [
      file(
        'contracts/Vault.sol',
        24,
        32,
        '(bool ok, ) = msg.sender.call{value: amount}("");\nrequire(ok);\nbalances[msg.sender] = 0;',
      ),
    ],
    ...(contracts ? { assetGroupId: contracts } : {}),
  });
  const reentrancyDup = await file1('tomas', bounty.id, {
    title: 'Vault.withdraw can be re-entered before the balance is reset',
    description: 'The balance is set to zero after the external call, so a malicious receiver can call back.',
    severity: 'high',
    relatedFiles: [file('contracts/Vault.sol', 27, 29)],
    ...(contracts ? { assetGroupId: contracts } : {}),
  });
  const randomness = await file1('amara', bounty.id, {
    title: 'Lottery winner is predictable from block values',
    description:
      '`pickWinner` derives the index from `block.timestamp` and `block.prevrandao`. A validator, or a contract that calls in the same block, can predict or steer the winner.\n\nUse a VRF or a commit-reveal scheme.',
    severity: 'high',
    relatedFiles: [file('contracts/Lottery.sol', 22, 30)],
    labels: [needsPoc.id],
    ...(contracts ? { assetGroupId: contracts } : {}),
  });
  await file1('tomas', bounty.id, {
    title: 'Clearing the players array grows with every ticket',
    description:
      '`delete players` costs gas linear in the number of players; a busy week can push `pickWinner` over the block gas limit.',
    severity: 'low',
    relatedFiles: [file('contracts/Lottery.sol', 29, 29)],
    ...(contracts ? { assetGroupId: contracts } : {}),
  });
  const session = await file1('amara', bounty.id, {
    title: 'Dashboard puts the session token in the URL after login',
    description:
      'After login the dashboard redirects to `/home?session=…`. The token ends up in browser history, proxies and the Referer header of outbound links.',
    severity: 'medium',
    labels: [frontend.id],
    ...(web ? { assetGroupId: web } : {}),
  });
  const twoStep = await file1('kai', bounty.id, {
    title: 'Ownable lacks a two-step ownership transfer',
    description: 'A mistyped address in `transferOwnership` loses ownership for good.',
    severity: 'informational',
    relatedFiles: [file('contracts/Ownable.sol', 21, 25)],
    ...(contracts ? { assetGroupId: contracts } : {}),
  });
  const spam = await file1('tomas', bounty.id, {
    title: 'URGENT your vault is hacked contact me on telegram',
    description: 'I found a big bug, pay me first and I tell you.',
    severity: 'low',
  });
  const pragma = await file1('amara', bounty.id, {
    title: 'Floating pragma in every contract',
    description: '`pragma solidity ^0.8.20` lets the contracts compile with untested compiler versions.',
    severity: 'informational',
    relatedFiles: [file('contracts/Vault.sol', 2, 2)],
  });
  const txOrigin = await file1('kai', audit.id, {
    title: 'Treasury authorizes the admin with tx.origin',
    description:
      '`approvePayee`, `pay` and `sweep` check `tx.origin == admin`. Any contract the admin interacts with can call the Treasury on their behalf and sweep it.\n\nUse `msg.sender`.',
    severity: 'high',
    relatedFiles: [
      file('contracts/Treasury.sol', 18, 34, 'require(tx.origin == admin, "Treasury: not admin");'),
    ],
    ...(core ? { assetGroupId: core } : {}),
  });
  const unchecked = await file1('amara', audit.id, {
    title: 'Result of payee.call is ignored in Treasury.pay',
    description:
      'A failed payment emits `Paid` anyway; the books and the chain disagree and the supplier is never paid.',
    severity: 'high',
    relatedFiles: [file('contracts/Treasury.sol', 24, 28, 'payee.call{value: amount}("");')],
    ...(core ? { assetGroupId: core } : {}),
  });
  const sweep = await file1('kai', audit.id, {
    title: 'sweep() ignores a failed send',
    description: '`to.send(...)` returns false on failure and the funds stay without any signal.',
    severity: 'medium',
    relatedFiles: [file('contracts/Treasury.sol', 31, 34)],
    ...(core ? { assetGroupId: core } : {}),
  });
  await file1('amara', audit.id, {
    title: 'approvePayee emits no event',
    description: 'Off-chain monitoring cannot see which payees were approved.',
    severity: 'informational',
    relatedFiles: [file('contracts/Treasury.sol', 18, 21)],
    ...(core ? { assetGroupId: core } : {}),
  });
  return {
    reentrancy,
    reentrancyDup,
    randomness,
    session,
    twoStep,
    spam,
    pragma,
    txOrigin,
    unchecked,
    sweep,
  };
}

/**
 * Judging: the judge and the triager move findings, mark a duplicate, assign, label and change a
 * severity; the client disputes, acknowledges and fixes; a reviewer withdraws. Then the rewards.
 */
export async function judgeFindings(
  cast: DemoCast,
  { bounty, audit }: DemoRepositories,
  { payout, mainnet }: DemoLabels,
  f: DemoFindings,
): Promise<void> {
  const { services } = cast.container;
  const {
    reentrancy,
    reentrancyDup,
    randomness,
    session,
    twoStep,
    spam,
    pragma,
    txOrigin,
    unchecked,
    sweep,
  } = f;
  const elena = await cast.actorOf('elena');
  const raj = await cast.actorOf('raj');
  const marcus = await cast.actorOf('marcus');
  const move = (
    actor: UserActor,
    finding: Finding,
    repositoryId: string,
    status: FindingStatus,
    reason?: string,
  ) => services.findings.changeStatus(actor, repositoryId, finding.id, status, reason);

  await move(elena, reentrancy, bounty.id, 'confirmed');
  await services.findings.assign(elena, bounty.id, reentrancy.id, PEOPLE.marcus.username);
  await services.findings.updateLabels(elena, bounty.id, reentrancy.id, { add: [payout.id] });
  await services.findings.markDuplicate(elena, bounty.id, reentrancyDup.id, {
    duplicateOf: reentrancy.id,
    description: 'Reentrancy in Vault.withdraw',
  });
  await move(raj, randomness, bounty.id, 'in_review');
  await move(elena, session, bounty.id, 'confirmed');
  await move(marcus, session, bounty.id, 'disputed', 'The session key expires before it can be replayed.');
  await move(elena, twoStep, bounty.id, 'rejected', 'The two-step transfer is the intended design.');
  await move(raj, spam, bounty.id, 'spam', 'Not a finding about this code.');
  await move(
    await cast.actorOf('amara'),
    pragma,
    bounty.id,
    'withdrawn',
    'A duplicate of my earlier report.',
  );
  await services.findings.changeSeverity(elena, audit.id, unchecked.id, 'medium');
  await move(elena, txOrigin, audit.id, 'confirmed');
  await services.findings.updateLabels(elena, audit.id, txOrigin.id, { add: [mainnet.id] });
  await move(marcus, txOrigin, audit.id, 'fixed');
  await move(elena, unchecked, audit.id, 'confirmed');
  await move(marcus, unchecked, audit.id, 'acknowledged');
  await move(elena, sweep, audit.id, 'confirmed');

  // Rewards have no service of their own yet: the demo sets the judged amounts directly.
  for (const [finding, reward] of [
    [reentrancy, '50000'],
    [txOrigin, '8000'],
    [unchecked, '2500'],
    [sweep, '2500'],
  ] as const) {
    await cast.container.database.db.update(findings).set({ reward }).where(eq(findings.id, finding.id));
  }
}

/**
 * Comments through the comments service: threads with replies, several visibilities and pings
 * (which become notifications). Returns how many were written.
 */
export async function seedComments(
  cast: DemoCast,
  { bounty, audit }: DemoRepositories,
  { reentrancy, session, randomness, txOrigin }: DemoFindings,
): Promise<number> {
  const { services } = cast.container;
  const thread: Array<{
    finding: Finding;
    repositoryId: string;
    author: PersonKey;
    visibility: 'public' | 'private' | 'internal';
    content: string;
    replyToPrevious?: boolean;
  }> = [
    {
      finding: reentrancy,
      repositoryId: bounty.id,
      author: 'elena',
      visibility: 'public',
      content:
        'Reproduced on a fork with the attached PoC: the Vault is drained in one transaction. Confirmed as critical. @project',
    },
    {
      finding: reentrancy,
      repositoryId: bounty.id,
      author: 'marcus',
      visibility: 'public',
      content: 'Thanks Kai. A fix moving the balance update before the call is in review.',
      replyToPrevious: true,
    },
    {
      finding: reentrancy,
      repositoryId: bounty.id,
      author: 'elena',
      visibility: 'private',
      content: 'Tomáš filed the same root cause an hour later; marked as its duplicate.',
    },
    {
      finding: reentrancy,
      repositoryId: bounty.id,
      author: 'marcus',
      visibility: 'internal',
      content: 'The fix ships with v2.1; keep the bounty page quiet until the upgrade is live.',
    },
    {
      finding: session,
      repositoryId: bounty.id,
      author: 'marcus',
      visibility: 'public',
      content:
        'The token in the URL is a one-time code exchanged on the first request, not the session itself.',
    },
    {
      finding: session,
      repositoryId: bounty.id,
      author: 'amara',
      visibility: 'public',
      content: `It is still valid for 10 minutes and leaks through \`Referer\`; see the attached capture. @${PEOPLE.elena.username}`,
      replyToPrevious: true,
    },
    {
      finding: randomness,
      repositoryId: bounty.id,
      author: 'raj',
      visibility: 'private',
      content: `@${PEOPLE.amara.username} please add a PoC that steers the winner within one block before this goes to the judge.`,
    },
    {
      finding: txOrigin,
      repositoryId: audit.id,
      author: 'marcus',
      visibility: 'public',
      content: 'Fixed in 4e1c2ab: every admin check uses msg.sender now.',
    },
  ];
  let previous: string | null = null;
  for (const c of thread) {
    const { id } = await services.comments.createComment(
      await cast.actorOf(c.author),
      c.repositoryId,
      c.finding.id,
      {
        content: c.content,
        visibility: c.visibility,
        parent: c.replyToPrevious ? previous : null,
      },
    );
    if (!c.replyToPrevious) previous = id;
  }
  return thread.length;
}
