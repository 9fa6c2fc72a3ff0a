import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { and, eq, ne, sql } from 'drizzle-orm';
import pino from 'pino';
import type { FindingStatus } from '../access/rules.ts';
import type { ServiceActor, UserActor } from '../auth/actor.ts';
import { authRepo } from '../auth/auth.repo.ts';
import { type Config, publicBaseUrl } from '../config.ts';
import { type Container, type ContainerOptions, createContainer, createLogger } from '../container.ts';
import { companies, findings, users } from '../db/schema/index.ts';
import { AppError } from '../errors.ts';
import type { CreateFinding, Finding } from '../platform/findings/findings.schemas.ts';
import type { RepositoryRole } from '../platform/repositories/repositories.repo.ts';
import { formatTable } from './http-client.ts';
import { packDirectory } from './scan.ts';

/** The bundled project the demo scans (`examples/sample-project`). */
export const SAMPLE_PROJECT_DIR = fileURLToPath(new URL('../../examples/sample-project/', import.meta.url));

/** How long the demo waits for its scan before giving up. */
const SCAN_TIMEOUT_MS = 120_000;
/** Demo user tokens live 30 days: long enough to explore, short enough not to linger. */
const TOKEN_DAYS = 30;
const DAY_MS = 86_400_000;

/** One demo user as printed: who they are, what they are, and a token to act as them. */
export interface DemoUser {
  userId: string;
  username: string;
  name: string;
  roles: string;
  token: string;
}

/** What `vigil seed demo` created, for the summary (tokens and the service key appear only here). */
export interface DemoSummary {
  /** The bootstrap admin's token when the seed generated it, null when it existed or was given. */
  adminToken: string | null;
  /** Whether the seed created the platform admin (the instance had never been started). */
  adminCreated: boolean;
  company: { id: string; name: string; handle: string };
  users: DemoUser[];
  repositories: Array<{ id: string; name: string; access: string; findings: number }>;
  findingsByStatus: Record<string, number>;
  comments: number;
  report: { id: string; title: string; publishedAt: string | null };
  scan: { id: string; status: string; findingsCount: number; workspaceId: string };
  serviceKey: { id: string; key: string; prefix: string; scopes: string[] };
  creditsLeft: number;
}

/** Options of {@link runSeedDemo}. */
export interface RunSeedDemoOptions {
  /** Where the summary goes (stdout for the command). */
  out: (text: string) => void;
  /** Passed to the container: a database the caller already opened, a logger. */
  container?: ContainerOptions;
}

interface PersonSpec {
  username: string;
  name: string;
  email: string;
  tagline: string;
  bio: string;
  timezone: string;
  skills: string[];
  reputation: number;
  guild?: string;
}

const COMPANY = {
  name: 'Acme Finance',
  handle: 'acme',
  website: 'https://acme.finance',
  sourcehost: 'acme-finance',
  microblog: '@acmefinance',
} as const;

/** The SSO domain of the company: users with an email there join it on their own. */
const SSO_DOMAIN = 'acme.finance';

const PEOPLE = {
  dana: {
    username: 'dana.whitfield',
    name: 'Dana Whitfield',
    email: 'dana@acme.finance',
    tagline: 'Head of Security, Acme Finance',
    bio: 'Runs the security programme of Acme Finance: audits, the bug bounty and incident response.',
    timezone: 'Europe/London',
    skills: ['security programmes', 'risk'],
    reputation: 0,
  },
  marcus: {
    username: 'marcus.osei',
    name: 'Marcus Osei',
    email: 'marcus@acme.finance',
    tagline: 'Smart contract lead, Acme Finance',
    bio: 'Owns the Vault and Treasury contracts; the client contact for audits and the bounty.',
    timezone: 'Europe/London',
    skills: ['solidity', 'foundry'],
    reputation: 0,
  },
  li: {
    username: 'li.chen',
    name: 'Li Chen',
    email: 'li@acme.finance',
    tagline: 'Engineering manager, Acme Finance',
    bio: 'Manages the protocol team.',
    timezone: 'Asia/Singapore',
    skills: ['typescript', 'solidity'],
    reputation: 0,
  },
  sofia: {
    username: 'sofia.marquez',
    name: 'Sofia Marquez',
    email: 'sofia.marquez@acme.finance',
    tagline: 'Backend engineer, Acme Finance',
    bio: 'Works on the payments back end.',
    timezone: 'America/Mexico_City',
    skills: ['go', 'postgres'],
    reputation: 0,
  },
  kai: {
    username: 'kai.nakamura',
    name: 'Kai Nakamura',
    email: 'kai@nakamura.dev',
    tagline: 'Independent smart contract auditor',
    bio: 'Eight years of EVM security; specialises in reentrancy and accounting bugs.',
    timezone: 'Asia/Tokyo',
    skills: ['solidity', 'defi', 'reentrancy', 'formal verification'],
    reputation: 1840,
    guild: 'Ledger Guild',
  },
  amara: {
    username: 'amara.okafor',
    name: 'Amara Okafor',
    email: 'amara@okafor.io',
    tagline: 'Security researcher',
    bio: 'Web and smart contract security; bug bounty hunter since 2019.',
    timezone: 'Africa/Lagos',
    skills: ['solidity', 'web security', 'fuzzing'],
    reputation: 1215,
    guild: 'Ledger Guild',
  },
  tomas: {
    username: 'tomas.novak',
    name: 'Tomáš Novák',
    email: 'tomas@novak.cz',
    tagline: 'Junior auditor',
    bio: 'Learning by doing: contests and public bounties.',
    timezone: 'Europe/Prague',
    skills: ['solidity', 'gas optimisation'],
    reputation: 310,
  },
  elena: {
    username: 'elena.petrova',
    name: 'Elena Petrova',
    email: 'elena@vigil.example',
    tagline: 'Lead judge',
    bio: 'Judges bounty and contest submissions: severity, validity and duplicates.',
    timezone: 'Europe/Berlin',
    skills: ['solidity', 'judging', 'defi'],
    reputation: 2400,
  },
  raj: {
    username: 'raj.patel',
    name: 'Raj Patel',
    email: 'raj@vigil.example',
    tagline: 'Triager',
    bio: 'First response on incoming findings: reproduces, labels and routes them.',
    timezone: 'Asia/Kolkata',
    skills: ['triage', 'solidity'],
    reputation: 980,
  },
  hannah: {
    username: 'hannah.berg',
    name: 'Hannah Berg',
    email: 'hannah@vigil.example',
    tagline: 'Engagement lead',
    bio: 'Sets up and runs engagements: scope, rewards, team and the final report.',
    timezone: 'Europe/Stockholm',
    skills: ['project management', 'solidity'],
    reputation: 1500,
  },
} satisfies Record<string, PersonSpec>;

type PersonKey = keyof typeof PEOPLE;

/** Throws CONFLICT unless the database holds nothing beyond the bootstrap admin. */
async function requireEmptyInstance(container: Container): Promise<void> {
  const db = container.database.db;
  const [companyCount] = await db.select({ n: sql<number>`count(*)::int` }).from(companies);
  const [userCount] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(users)
    .where(ne(users.username, 'admin'));
  if ((companyCount?.n ?? 0) > 0 || (userCount?.n ?? 0) > 0) {
    throw new AppError('CONFLICT', {
      message:
        'The demo fills an empty instance only, and this one already has companies or users. Point DATABASE_URL (or VIGIL_DATA_DIR) at an empty database.',
    });
  }
}

/** The platform admin `admin` as an actor, read from the database. */
async function loadAdminActor(container: Container): Promise<UserActor> {
  const db = container.database.db;
  const [admin] = await db.select().from(users).where(eq(users.username, 'admin'));
  if (!admin) throw new AppError('CONFLICT', { message: 'The platform admin "admin" does not exist.' });
  const permissions = await authRepo(db).findPermissions(admin.id);
  if (!permissions.includes('admin')) {
    throw new AppError('CONFLICT', { message: 'The user "admin" is not a platform admin.' });
  }
  return {
    kind: 'user',
    credentialId: 'cli:seed',
    userId: admin.id,
    username: admin.username,
    companies: new Map(),
    permissions: new Set(permissions),
  };
}

/** Packs a directory into a tar.gz as `vigil scan` packs one, in memory (the sample project is a few kilobytes). */
export async function packSampleProject(root: string = SAMPLE_PROJECT_DIR): Promise<Buffer> {
  const work = await mkdtemp(path.join(os.tmpdir(), 'vigil-seed-'));
  try {
    const target = path.join(work, 'sample-project.tar.gz');
    await packDirectory(root, target);
    return await readFile(target);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** The demo itself: every step through the services, as the users who would take it. */
async function seedDemo(
  container: Container,
  bootstrap: Pick<DemoSummary, 'adminToken' | 'adminCreated'>,
): Promise<DemoSummary> {
  const { services } = container;
  const db = container.database.db;
  const admin = await loadAdminActor(container);
  const now = Date.now();
  const tokenExpiry = new Date(now + TOKEN_DAYS * DAY_MS);

  const ids = {} as Record<PersonKey, string>;
  const tokens = {} as Record<PersonKey, string>;
  const roles = {} as Record<PersonKey, string[]>;
  const addRole = (who: PersonKey, role: string) => {
    roles[who] = [...(roles[who] ?? []), role];
  };
  /** A fresh actor for the user: company memberships are read when the token is authenticated. */
  const actorOf = async (who: PersonKey): Promise<UserActor> => {
    if (!tokens[who]) {
      const issued = await services.admin.createUserToken(admin, ids[who], {
        expiresAt: tokenExpiry,
        name: 'demo',
      });
      tokens[who] = issued.token;
    }
    return services.auth.authenticateUserToken(tokens[who]);
  };

  // The company, its first manager (created by the platform admin), and the SSO rule.
  const company = await services.admin.createCompany(admin, { ...COMPANY });
  const dana = await services.admin.createUser(admin, {
    username: PEOPLE.dana.username,
    name: PEOPLE.dana.name,
    email: PEOPLE.dana.email,
    companyId: company.id,
    companyRole: 'manager',
  });
  ids.dana = dana.id;
  addRole('dana', 'company manager');
  const danaActor = await actorOf('dana');
  await services.sso.createRule(danaActor, company.id, SSO_DOMAIN);

  // Invitations by the manager to people with accounts of their own (created by the platform
  // admin), accepted by the invitees; one member is promoted to manager.
  for (const who of ['marcus', 'li'] as const) {
    const person = PEOPLE[who];
    const created = await services.admin.createUser(admin, {
      username: person.username,
      name: person.name,
      email: person.email,
    });
    ids[who] = created.id;
    const invitation = await services.invitations.invite(danaActor, company.id, {
      username: person.username,
      role: 'member',
    });
    await services.invitations.accept(await actorOf(who), invitation.id, {}, { address: 'seed' });
  }
  addRole('marcus', 'company member');
  await services.users.changeCompanyRole(danaActor, company.id, ids.li, 'manager');
  addRole('li', 'company manager (promoted)');

  // Everyone else has an account of their own; Sofia joins through the SSO domain.
  for (const who of ['sofia', 'kai', 'amara', 'tomas', 'elena', 'raj', 'hannah'] as const) {
    const person = PEOPLE[who];
    const created = await services.admin.createUser(admin, {
      username: person.username,
      name: person.name,
      email: person.email,
    });
    ids[who] = created.id;
  }
  await services.users.joinCompany(await actorOf('sofia'), company.id, ids.sofia);
  addRole('sofia', 'company member (SSO)');

  // Public profiles; reputation, verification and guilds are the platform admin's to set.
  for (const [who, person] of Object.entries(PEOPLE) as Array<[PersonKey, PersonSpec]>) {
    await services.users.updateProfile(admin, ids[who], {
      tagline: person.tagline,
      bio: person.bio,
      timezone: person.timezone,
      skills: person.skills,
      reputation: person.reputation,
      verifiedProfile: person.reputation > 0,
      ...(person.guild ? { guild: person.guild } : {}),
    });
  }

  // The public bug bounty: asset groups with sub-groups, rewards and assets, and a safe harbor.
  const bounty = await services.repositories.createRepository(danaActor, company.id, {
    name: 'Acme Vault Bug Bounty',
    url: 'https://github.com/acme-finance/vault',
    currencyCode: 'USDC',
    totalRewardPot: '250000',
    timeframe: {
      start: new Date(now - 30 * DAY_MS).toISOString(),
      end: new Date(now + 60 * DAY_MS).toISOString(),
    },
    instructions:
      'Report vulnerabilities in the Vault, Treasury and Lottery contracts and in app.acme.finance. Include a proof of concept; testnet only.',
    allowedSeverities: ['critical', 'high', 'medium', 'low', 'informational'],
    isPublic: true,
    assetGroups: [
      {
        name: 'Smart contracts',
        description: 'The contracts holding customer funds.',
        rewards: [
          { minReward: '10000', maxReward: '100000' },
          { minReward: '2000', maxReward: '10000' },
        ],
        assets: [
          {
            name: 'Vault',
            description: 'ETH deposits and withdrawals',
            reference: 'contracts/Vault.sol',
          },
          {
            name: 'Treasury',
            description: 'Supplier payments',
            reference: 'contracts/Treasury.sol',
          },
        ],
        subGroups: [
          {
            name: 'Promotions',
            description: 'Customer promotions paid in ETH.',
            assets: [
              {
                name: 'Lottery',
                description: 'The weekly raffle',
                reference: 'contracts/Lottery.sol',
              },
            ],
          },
        ],
      },
      {
        name: 'Web application',
        description: 'The customer dashboard.',
        rewards: [{ minReward: '500', maxReward: '5000' }],
        assets: [
          { name: 'Dashboard', description: 'Customer web app', reference: 'https://app.acme.finance' },
        ],
      },
      {
        name: 'Out of scope',
        description: 'Known issues and third-party code; not rewarded.',
        outOfScope: true,
        assets: [{ name: 'Test contracts', description: 'Mocks and fixtures', reference: 'test/' }],
      },
    ],
    safeHarbor: {
      description:
        'Whitehats who rescue funds during an active exploit keep 10% (capped) and return the rest to the addresses below.',
      reward: '10',
      cap: '1000000',
      returnAddresses: [{ address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed' }],
      assets: [{ name: 'Vault', description: 'ETH held by the Vault contract' }],
    },
  });
  const audit = await services.repositories.createRepository(danaActor, company.id, {
    name: 'Acme Treasury v2 Audit',
    url: 'https://github.com/acme-finance/treasury',
    currencyCode: 'USD',
    totalRewardPot: '60000',
    timeframe: {
      start: new Date(now - 45 * DAY_MS).toISOString(),
      end: new Date(now - 15 * DAY_MS).toISOString(),
    },
    instructions: 'Private audit of the Treasury v2 release before mainnet deployment.',
    allowedSeverities: ['critical', 'high', 'medium', 'low', 'informational'],
    isPublic: false,
    assetGroups: [
      {
        name: 'Core contracts',
        description: 'Treasury and its access control.',
        rewards: [{ minReward: '0', maxReward: '0' }],
        assets: [
          { name: 'Treasury', description: 'Supplier payments', reference: 'contracts/Treasury.sol' },
          { name: 'Ownable', description: 'Ownership helper', reference: 'contracts/Ownable.sol' },
        ],
      },
    ],
  });

  // Memberships: the repository roles, each recorded in the repositories' change logs.
  const memberships: Array<[string, PersonKey, RepositoryRole]> = [
    [bounty.id, 'hannah', 'admin'],
    [bounty.id, 'marcus', 'client'],
    [bounty.id, 'elena', 'judge'],
    [bounty.id, 'raj', 'triager'],
    [bounty.id, 'kai', 'reviewer'],
    [bounty.id, 'amara', 'reviewer'],
    [bounty.id, 'tomas', 'reviewer'],
    [audit.id, 'hannah', 'admin'],
    [audit.id, 'marcus', 'client'],
    [audit.id, 'elena', 'judge'],
    [audit.id, 'kai', 'reviewer'],
    [audit.id, 'amara', 'reviewer'],
  ];
  for (const [repositoryId, who, role] of memberships) {
    await services.repositories.putMember(danaActor, repositoryId, ids[who], { role });
  }
  for (const [who, role] of [
    ['hannah', 'repository admin'],
    ['marcus', 'client'],
    ['elena', 'judge'],
    ['raj', 'triager'],
    ['kai', 'reviewer'],
    ['amara', 'reviewer'],
    ['tomas', 'reviewer'],
  ] as const) {
    addRole(who, role);
  }

  // Labels, made by the repository admin.
  const hannah = await actorOf('hannah');
  const needsPoc = await services.labels.createLabel(hannah, bounty.id, {
    name: 'needs-poc',
    description: 'A proof of concept is needed before judging.',
    reviewerUse: true,
  });
  const payout = await services.labels.createLabel(hannah, bounty.id, {
    name: 'payout-approved',
    description: 'The reward is approved for payment.',
  });
  const frontend = await services.labels.createLabel(hannah, bounty.id, {
    name: 'frontend',
    description: 'Affects the web application.',
    reviewerUse: true,
  });
  const mainnet = await services.labels.createLabel(hannah, audit.id, {
    name: 'fix-before-mainnet',
    description: 'Must be fixed before the mainnet deployment.',
  });

  const groupId = (repo: typeof bounty, name: string) => repo.assetGroups.find((g) => g.name === name)?.id;
  const file = (p: string, start: number, end: number, relevantContent?: string) => ({
    path: p,
    lines: { start, end },
    language: 'solidity',
    ...(relevantContent ? { relevantContent } : {}),
  });

  // Findings, filed by the reviewers.
  const reviewers = {
    kai: await actorOf('kai'),
    amara: await actorOf('amara'),
    tomas: await actorOf('tomas'),
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

  // Judging: the judge and the triager move findings; the client disputes, acknowledges and fixes.
  const elena = await actorOf('elena');
  const raj = await actorOf('raj');
  const marcus = await actorOf('marcus');
  const move = (actor: UserActor, finding: Finding, repositoryId: string, status: FindingStatus) =>
    services.findings.changeStatus(actor, repositoryId, finding.id, status);

  await move(elena, reentrancy, bounty.id, 'confirmed');
  await services.findings.assign(elena, bounty.id, reentrancy.id, PEOPLE.marcus.username);
  await services.findings.updateLabels(elena, bounty.id, reentrancy.id, { add: [payout.id] });
  await services.findings.markDuplicate(elena, bounty.id, reentrancyDup.id, {
    duplicateOf: reentrancy.id,
    description: 'Reentrancy in Vault.withdraw',
  });
  await move(raj, randomness, bounty.id, 'in_review');
  await move(elena, session, bounty.id, 'confirmed');
  await move(marcus, session, bounty.id, 'disputed');
  await move(elena, twoStep, bounty.id, 'rejected');
  await move(raj, spam, bounty.id, 'spam');
  await move(reviewers.amara, pragma, bounty.id, 'withdrawn');
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
    await db.update(findings).set({ reward }).where(eq(findings.id, finding.id));
  }

  // Comments, through the comments service: threads with replies, several visibilities and
  // pings (which become notifications).
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
      await actorOf(c.author),
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

  // The audit is over: finished, reported and published by the company's manager.
  await services.repositories.finishRepository(hannah, audit.id);
  const draft = await services.reports.createReport(danaActor, {
    repositoryId: audit.id,
    description:
      'Private audit of Acme Treasury v2. One high severity issue (authorization through tx.origin) was fixed before deployment; the unchecked payment result was acknowledged.',
    seoTitle: 'Acme Treasury v2 security audit',
    seoDescription: 'Findings of the Acme Treasury v2 audit.',
    repositoryLinks: ['https://github.com/acme-finance/treasury'],
    commitHashes: ['4e1c2ab9d0f7c3b1a8e6f5d4c3b2a1908f7e6d5c'],
    typeOfProject: ['DeFi', 'Treasury'],
  });
  const report = await services.reports.publishReport(danaActor, draft.id, { isPrivate: false });

  // The scanner: a service key, credits, and a real scan of the bundled sample project.
  const serviceKey = await services.serviceKeys.createKey(danaActor, company.id, { name: 'ci' });
  await services.admin.grantCredits(admin, company.id, 20, 'demo credits');
  const keyActor = await services.auth.authenticateServiceKey(serviceKey.key);
  const scan = await scanSampleProject(container, keyActor);

  const byStatus: Record<string, number> = {};
  const statusRows = await db
    .select({ status: findings.status, n: sql<number>`count(*)::int` })
    .from(findings)
    .where(and(eq(findings.companyId, company.id), sql`${findings.repositoryId} is not null`))
    .groupBy(findings.status);
  for (const row of statusRows) byStatus[row.status] = row.n;
  const repoCounts = await db
    .select({ repositoryId: findings.repositoryId, n: sql<number>`count(*)::int` })
    .from(findings)
    .where(eq(findings.companyId, company.id))
    .groupBy(findings.repositoryId);
  const countOf = (id: string) => repoCounts.find((r) => r.repositoryId === id)?.n ?? 0;
  const balances = await services.credits.getBalances(company.id);

  const order: PersonKey[] = [
    'dana',
    'li',
    'marcus',
    'sofia',
    'hannah',
    'elena',
    'raj',
    'kai',
    'amara',
    'tomas',
  ];
  for (const who of order) await actorOf(who);
  return {
    ...bootstrap,
    company: { id: company.id, name: company.name, handle: company.handle },
    users: order.map((who) => ({
      userId: ids[who],
      username: PEOPLE[who].username,
      name: PEOPLE[who].name,
      roles: (roles[who] ?? []).join(', '),
      token: tokens[who],
    })),
    repositories: [
      { id: bounty.id, name: bounty.name, access: 'public bounty', findings: countOf(bounty.id) },
      { id: audit.id, name: audit.name, access: 'private audit, finished', findings: countOf(audit.id) },
    ],
    findingsByStatus: byStatus,
    comments: thread.length,
    report: { id: report.id, title: report.projectTitle, publishedAt: report.publishedAt },
    scan,
    serviceKey: {
      id: serviceKey.id,
      key: serviceKey.key,
      prefix: serviceKey.prefix,
      scopes: [...serviceKey.scopes],
    },
    creditsLeft: balances.remaining,
  };
}

/**
 * Uploads the sample project as the scanner API would take it (session, PUT, completion),
 * creates a standard scan and waits for the worker to complete it.
 */
async function scanSampleProject(container: Container, actor: ServiceActor): Promise<DemoSummary['scan']> {
  const { services, config } = container;
  const archive = await packSampleProject();
  const sha256 = createHash('sha256').update(archive).digest('hex');
  const baseUrl = publicBaseUrl(config);
  const sessions = await services.uploads.createSourceUploads(
    actor.organizationId,
    {
      workspace: { name: 'acme-vault' },
      archives: [{ filename: 'sample-project.tar.gz', sizeBytes: archive.length }],
    },
    baseUrl,
  );
  const upload = sessions.uploads[0]!;
  const url = new URL(upload.uploadUrl);
  const signature = url.searchParams.get('signature');
  if (url.pathname.endsWith(`/uploads/${upload.uploadId}`) && signature !== null) {
    // The embedded store's signed URL: taken in-process, exactly as its PUT route takes it.
    await services.uploads.receiveUpload(
      upload.uploadId,
      {
        expires: url.searchParams.get('expires') ?? undefined,
        maxBytes: url.searchParams.get('maxBytes') ?? undefined,
        signature,
      },
      Readable.from([archive]),
      archive.length,
      'seed',
    );
  } else {
    // A presigned object-store URL: PUT the archive there like any client would.
    const response = await fetch(upload.uploadUrl, {
      method: 'PUT',
      headers: upload.headers,
      body: archive,
    });
    if (!response.ok) {
      throw new AppError('SERVICE_UNAVAILABLE', {
        message: `The object store refused the sample project upload (${response.status}).`,
      });
    }
  }
  const completed = await services.uploads.completeSourceUpload(actor.organizationId, upload.uploadId, {
    sha256,
  });
  const created = await services.scans.createScan(actor, `seed-demo-${randomUUID()}`, {
    type: 'standard',
    scanSources: [{ kind: 'local', archiveId: completed.archiveId, sha256 }],
  });
  const deadline = Date.now() + SCAN_TIMEOUT_MS;
  for (;;) {
    const scan = await services.scans.getScan(actor, created.body.id);
    if (scan.status === 'completed') {
      return {
        id: scan.id,
        status: scan.status,
        findingsCount: scan.findingsCount,
        workspaceId: scan.workspaceId,
      };
    }
    if (scan.status === 'failed' || scan.status === 'cancelled') {
      throw new AppError('CONFLICT', {
        message: `The demo scan ${scan.id} ended ${scan.status}${scan.error ? `: ${scan.error.message}` : ''}.`,
      });
    }
    if (Date.now() > deadline) {
      throw new AppError('SERVICE_UNAVAILABLE', {
        message: `The demo scan ${scan.id} did not complete within ${SCAN_TIMEOUT_MS / 1000} s (status ${scan.status}). Is the job queue working?`,
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** The summary a person reads after the seed: ids, tokens, the service key, and what to try next. */
export function formatDemoSummary(summary: DemoSummary, baseUrl: string): string {
  const lines: string[] = [];
  if (summary.adminCreated) {
    lines.push(
      'Created the platform admin "admin".',
      summary.adminToken
        ? `Its API token (shown once, store it now): ${summary.adminToken}`
        : 'Its API token is the one given in VIGIL_ADMIN_TOKEN.',
      '',
    );
  }
  const manager = summary.users[0];
  const reviewer = summary.users.find((u) => u.roles.includes('reviewer'));
  lines.push(
    `Demo company: ${summary.company.name} (handle ${summary.company.handle}, id ${summary.company.id})`,
    '',
    `Users (tokens expire in ${TOKEN_DAYS} days; demo only):`,
    formatTable(
      summary.users.map((u) => ({ username: u.username, name: u.name, roles: u.roles, token: u.token })),
      ['username', 'name', 'roles', 'token'],
    ),
    '',
    'Repositories:',
    formatTable(
      summary.repositories.map((r) => ({ id: r.id, name: r.name, access: r.access, findings: r.findings })),
      ['id', 'name', 'access', 'findings'],
    ),
    '',
    `Findings by status: ${Object.entries(summary.findingsByStatus)
      .map(([status, n]) => `${status} ${n}`)
      .join(', ')}; ${summary.comments} comments`,
    `Published report: ${summary.report.title} (${summary.report.id})`,
    `Scan of examples/sample-project: ${summary.scan.id}, ${summary.scan.status}, ${summary.scan.findingsCount} findings`,
    '',
    `Service key "ci" (shown once, store it now): ${summary.serviceKey.key}`,
    `  scopes: ${summary.serviceKey.scopes.join(', ')}; credits left: ${summary.creditsLeft}`,
    '',
    'Next steps: start the server (npm start), then for example',
  );
  if (manager) {
    lines.push(
      `  curl -H "Authorization: Bearer ${manager.token}" ${baseUrl}/api/v0/companies/${summary.company.id}/repositories`,
    );
  }
  if (reviewer) {
    lines.push(
      `  curl -H "Authorization: Bearer ${reviewer.token}" "${baseUrl}/api/v0/repositories/all-findings"`,
    );
  }
  lines.push(
    `  curl -H "Authorization: Bearer ${summary.serviceKey.key}" ${baseUrl}/api/scanner/v1/scans/${summary.scan.id}/findings`,
    `  curl ${baseUrl}/api/v0/reports/${summary.report.id}`,
    `  open ${baseUrl}/docs`,
    '',
  );
  return lines.join('\n');
}

/**
 * `vigil seed demo`: on an instance with nothing but (at most) the bootstrap admin, creates the
 * demo through the services and writes the summary. CONFLICT when the instance has data.
 */
export async function runSeedDemo(config: Config, options: RunSeedDemoOptions): Promise<DemoSummary> {
  // Logs go to stderr and only from warnings up, so that stdout is the summary alone.
  const level = ['trace', 'debug'].includes(config.logLevel) ? config.logLevel : 'warn';
  const log = options.container?.log ?? createLogger({ logLevel: level }, pino.destination(2));
  const container = await createContainer(config, { ...options.container, log });
  try {
    await requireEmptyInstance(container);
    const created = await container.services.admin.bootstrapAdmin({ token: config.adminToken });
    const admin = {
      adminToken: created && !config.adminToken ? created.token : null,
      adminCreated: created !== null,
    };
    await container.queue.start({ supervise: true });
    await container.queue.work(container, { concurrency: 1, pollingSeconds: 1 });
    const summary = await seedDemo(container, admin);
    await container.queue.stop({ timeoutMs: config.shutdownTimeoutMs });
    options.out(formatDemoSummary(summary, publicBaseUrl(config)));
    return summary;
  } finally {
    await container.close();
  }
}

/** Adds `vigil seed demo`. */
