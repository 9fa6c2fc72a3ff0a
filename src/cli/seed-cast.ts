/**
 * The people of `vigil seed demo` and the cast that acts for them: each person's account, token
 * and the roles the summary prints. Creates the demo company with its people (invitations, an SSO
 * join, a promotion, public profiles).
 */
import type { UserActor } from '../auth/actor.ts';
import type { Container } from '../container.ts';

/** Demo user tokens live 30 days: long enough to explore, short enough not to linger. */
export const TOKEN_DAYS = 30;
export const DAY_MS = 86_400_000;

export interface PersonSpec {
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

export const COMPANY = {
  name: 'Acme Finance',
  handle: 'acme',
  website: 'https://acme.finance',
  sourcehost: 'acme-finance',
  microblog: '@acmefinance',
} as const;

/** The SSO domain of the company: users with an email there join it on their own. */
export const SSO_DOMAIN = 'acme.finance';

export const PEOPLE = {
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

export type PersonKey = keyof typeof PEOPLE;

/** The demo company as the admin service returns it. */
export type DemoCompany = Awaited<ReturnType<Container['services']['admin']['createCompany']>>;

/** The demo's people as the seed acts for them: their ids, tokens and the roles they were given. */
export class DemoCast {
  readonly ids = {} as Record<PersonKey, string>;
  readonly tokens = {} as Record<PersonKey, string>;
  private readonly roles = {} as Record<PersonKey, string[]>;

  constructor(
    readonly container: Container,
    /** The platform admin, who creates accounts and sets what only a platform admin may. */
    readonly admin: UserActor,
    private readonly tokenExpiry: Date,
  ) {}

  /** Records a role for the summary. */
  addRole(who: PersonKey, role: string): void {
    this.roles[who] = [...(this.roles[who] ?? []), role];
  }

  /** The roles of a person as the summary prints them. */
  rolesOf(who: PersonKey): string {
    return (this.roles[who] ?? []).join(', ');
  }

  /** A fresh actor for the user: company memberships are read when the token is authenticated. */
  async actorOf(who: PersonKey): Promise<UserActor> {
    const { services } = this.container;
    if (!this.tokens[who]) {
      const issued = await services.admin.createUserToken(this.admin, this.ids[who], {
        expiresAt: this.tokenExpiry,
        name: 'demo',
      });
      this.tokens[who] = issued.token;
    }
    return services.auth.authenticateUserToken(this.tokens[who]);
  }
}

/**
 * The company, its first manager (created by the platform admin) with the SSO rule, the members
 * who join by invitation or by the SSO domain, everyone else's accounts and public profiles.
 * Returns the company and its first manager.
 */
export async function seedCompanyAndPeople(
  cast: DemoCast,
): Promise<{ company: DemoCompany; manager: UserActor }> {
  const { services } = cast.container;
  const { admin, ids } = cast;

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
  cast.addRole('dana', 'company manager');
  const manager = await cast.actorOf('dana');
  await services.sso.createRule(manager, company.id, SSO_DOMAIN);

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
    const invitation = await services.invitations.invite(manager, company.id, {
      username: person.username,
      role: 'member',
    });
    await services.invitations.accept(await cast.actorOf(who), invitation.id, {}, { address: 'seed' });
  }
  cast.addRole('marcus', 'company member');
  await services.users.changeCompanyRole(manager, company.id, ids.li, 'manager');
  cast.addRole('li', 'company manager (promoted)');

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
  await services.users.joinCompany(await cast.actorOf('sofia'), company.id, ids.sofia);
  cast.addRole('sofia', 'company member (SSO)');

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
  return { company, manager };
}
