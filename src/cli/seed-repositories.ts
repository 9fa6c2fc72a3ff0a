/**
 * The repositories of `vigil seed demo`: a public bug bounty and a finished private audit with
 * their scope, team and labels, and the audit's published report.
 */
import type { UserActor } from '../auth/actor.ts';
import type { Container } from '../container.ts';
import type { RepositoryRole } from '../platform/repositories/repositories.repo.ts';
import type { CreateRepositoryRequest } from '../platform/repositories/repositories.schemas.ts';
import { DAY_MS, type DemoCast, type PersonKey } from './seed-cast.ts';

type Services = Container['services'];
/** A repository as the repositories service returns it. */
export type DemoRepository = Awaited<ReturnType<Services['repositories']['createRepository']>>;
/** A label as the labels service returns it. */
export type DemoLabel = Awaited<ReturnType<Services['labels']['createLabel']>>;
/** A published report as the reports service returns it. */
export type DemoReport = Awaited<ReturnType<Services['reports']['publishReport']>>;

/** The demo's two repositories. */
export interface DemoRepositories {
  bounty: DemoRepository;
  audit: DemoRepository;
}

/** The labels the repository admin makes. */
export interface DemoLabels {
  needsPoc: DemoLabel;
  payout: DemoLabel;
  frontend: DemoLabel;
  mainnet: DemoLabel;
}

/** The public bug bounty: asset groups with sub-groups, rewards and assets, and a safe harbor. */
function bountyInput(now: number): CreateRepositoryRequest {
  return {
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
  };
}

/** The private audit of Treasury v2, over before the demo starts. */
function auditInput(now: number): CreateRepositoryRequest {
  return {
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
  };
}

/**
 * The public bug bounty (asset groups with sub-groups, rewards, assets and a safe harbor) and the
 * private audit, created by the company's manager, then their teams, each membership recorded in
 * the repositories' change logs.
 */
export async function seedRepositories(
  cast: DemoCast,
  manager: UserActor,
  companyId: string,
  now: number,
): Promise<DemoRepositories> {
  const { services } = cast.container;
  const { ids } = cast;
  const bounty = await services.repositories.createRepository(manager, companyId, bountyInput(now));
  const audit = await services.repositories.createRepository(manager, companyId, auditInput(now));

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
    await services.repositories.putMember(manager, repositoryId, ids[who], { role });
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
    cast.addRole(who, role);
  }

  return { bounty, audit };
}

/** The labels of both repositories, made by the repository admin. */
export async function seedLabels(cast: DemoCast, { bounty, audit }: DemoRepositories): Promise<DemoLabels> {
  const { services } = cast.container;
  const hannah = await cast.actorOf('hannah');
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
  return { needsPoc, payout, frontend, mainnet };
}

/** The audit is over: finished by the repository admin, reported and published by the company's manager. */
export async function publishAuditReport(
  cast: DemoCast,
  manager: UserActor,
  audit: DemoRepository,
): Promise<DemoReport> {
  const { services } = cast.container;
  await services.repositories.finishRepository(await cast.actorOf('hannah'), audit.id);
  const draft = await services.reports.createReport(manager, {
    repositoryId: audit.id,
    description:
      'Private audit of Acme Treasury v2. One high severity issue (authorization through tx.origin) was fixed before deployment; the unchecked payment result was acknowledged.',
    seoTitle: 'Acme Treasury v2 security audit',
    seoDescription: 'Findings of the Acme Treasury v2 audit.',
    repositoryLinks: ['https://github.com/acme-finance/treasury'],
    commitHashes: ['4e1c2ab9d0f7c3b1a8e6f5d4c3b2a1908f7e6d5c'],
    typeOfProject: ['DeFi', 'Treasury'],
  });
  return services.reports.publishReport(manager, draft.id, { isPrivate: false });
}
