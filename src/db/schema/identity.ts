import { sql } from 'drizzle-orm';
import {
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import type { IntegrationSettings } from '../../integrations/settings.ts';

const createdAt = () => timestamp('created_at', { withTimezone: true }).notNull().defaultNow();

/** Organization = company. */
export const companies = pgTable('companies', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: text('name').notNull(),
  handle: text('handle').notNull().unique(),
  logo: text('logo'),
  website: text('website'),
  sourcehost: text('sourcehost'),
  microblog: text('microblog'),
  createdAt: createdAt(),
});

/** A badge on a user's auditor public profile (`issuedAt` an ISO date-time). */
export interface UserBadge {
  id: string;
  name: string;
  image: string;
  description: string;
  issuedAt: string;
}

export const users = pgTable(
  'users',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    username: text('username').notNull(),
    name: text('name').notNull(),
    email: text('email'),
    avatar: text('avatar'),
    isGeneratedAvatar: boolean('is_generated_avatar').notNull().default(true),
    isBot: boolean('is_bot').notNull().default(false),
    isActivated: boolean('is_activated').notNull().default(true),
    chatA: text('chat_a'),
    chatB: text('chat_b'),
    timezone: text('timezone'),
    reputation: integer('reputation').notNull().default(0),
    verifiedProfile: boolean('verified_profile').notNull().default(false),
    isNdaSigned: boolean('is_nda_signed').notNull().default(false),
    skills: text('skills').array().notNull().default(sql`'{}'::text[]`),
    tagline: text('tagline'),
    bio: text('bio'),
    website: text('website'),
    sourcehost: text('sourcehost'),
    microblog: text('microblog'),
    guildId: uuid('guild_id'),
    /** Badges shown on the auditor public profile, awarded by platform admins. */
    badges: jsonb('badges').$type<UserBadge[]>().notNull().default([]),
    disabledAt: timestamp('disabled_at', { withTimezone: true }),
    deletedAt: timestamp('deleted_at', { withTimezone: true }),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('users_username_lower_key').on(sql`lower(${t.username})`)],
);

/**
 * A user's membership of a company: `manager` or `member`. Invitations are apart
 * (`company_invitations`); a membership starts when one is accepted or by an SSO domain rule.
 */
export const companyMembers = pgTable(
  'company_members',
  {
    companyId: uuid('company_id')
      .notNull()
      .references(() => companies.id, { onDelete: 'cascade' }),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    role: text('role', { enum: ['manager', 'member'] }).notNull(),
    invitedAt: timestamp('invited_at', { withTimezone: true }).notNull().defaultNow(),
    joinedAt: timestamp('joined_at', { withTimezone: true }),
    disabledAt: timestamp('disabled_at', { withTimezone: true }),
  },
  (t) => [primaryKey({ columns: [t.companyId, t.userId] }), index('company_members_user_idx').on(t.userId)],
);

/** States of a company invitation; `pending` ones past `expiresAt` are read as `expired`. */
export const invitationStates = ['pending', 'accepted', 'declined', 'revoked', 'expired'] as const;

/**
 * An invitation to join a company, apart from any user: it holds only what the inviting manager
 * supplied (username and/or e-mail, a name) and becomes a membership when the invitee accepts it.
 * An invitation by username is accepted by the user of that name; one by e-mail alone, with the
 * one-time secret the invitation e-mail carries (`secretHash`; `mailSecretSealed` holds it
 * sealed until the e-mail is sent, then is cleared).
 */
export const companyInvitations = pgTable(
  'company_invitations',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    companyId: uuid('company_id')
      .notNull()
      .references(() => companies.id, { onDelete: 'cascade' }),
    role: text('role', { enum: ['manager', 'member'] }).notNull(),
    username: text('username'),
    email: text('email'),
    name: text('name'),
    state: text('state', { enum: invitationStates }).notNull().default('pending'),
    secretHash: text('secret_hash'),
    mailSecretSealed: text('mail_secret_sealed'),
    mailedAt: timestamp('mailed_at', { withTimezone: true }),
    mailError: text('mail_error'),
    invitedBy: uuid('invited_by').references(() => users.id, { onDelete: 'set null' }),
    acceptedBy: uuid('accepted_by').references(() => users.id, { onDelete: 'set null' }),
    createdAt: createdAt(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    respondedAt: timestamp('responded_at', { withTimezone: true }),
  },
  (t) => [
    index('company_invitations_company_idx').on(t.companyId, t.createdAt),
    // One open invitation per company and username, and per company and e-mail.
    uniqueIndex('company_invitations_pending_username_key')
      .on(t.companyId, sql`lower(${t.username})`)
      .where(sql`${t.state} = 'pending' and ${t.username} is not null`),
    uniqueIndex('company_invitations_pending_email_key')
      .on(t.companyId, sql`lower(${t.email})`)
      .where(sql`${t.state} = 'pending' and ${t.email} is not null and ${t.username} is null`),
    index('company_invitations_username_idx')
      .on(sql`lower(${t.username})`)
      .where(sql`${t.state} = 'pending'`),
  ],
);

/** Platform-wide permissions such as `read_all_companies`. */
export const platformPermissions = pgTable(
  'platform_permissions',
  {
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    permission: text('permission').notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.permission] })],
);

/** User API tokens (v0). Only the SHA-256 hash is stored. */
export const userTokens = pgTable(
  'user_tokens',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull().default('api'),
    prefix: text('prefix').notNull(),
    hash: text('hash').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('user_tokens_hash_key').on(t.hash), index('user_tokens_user_idx').on(t.userId)],
);

/**
 * Console sessions: opened once with a user token at sign-in; the `vigil_session` cookie carries
 * a random session id of their own (`vgl_cs_…`), of which only the SHA-256 hash is stored. A
 * session ends when it expires or is revoked, and with its token (revoked) or its user
 * (disabled or deleted): migration 0030's triggers revoke it then.
 */
export const consoleSessions = pgTable(
  'console_sessions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    tokenId: uuid('token_id')
      .notNull()
      .references(() => userTokens.id, { onDelete: 'cascade' }),
    hash: text('hash').notNull(),
    /** The browser's User-Agent at sign-in (at most 200 characters), to recognise it in the list. */
    userAgent: text('user_agent'),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('console_sessions_hash_key').on(t.hash),
    index('console_sessions_user_idx').on(t.userId, t.createdAt),
    index('console_sessions_token_idx').on(t.tokenId),
  ],
);

/** Organization service keys (v1). Only the SHA-256 hash is stored. */
export const serviceKeys = pgTable(
  'service_keys',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    companyId: uuid('company_id')
      .notNull()
      .references(() => companies.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    prefix: text('prefix').notNull(),
    hash: text('hash').notNull(),
    scopes: text('scopes').array().notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
    createdBy: uuid('created_by').references(() => users.id, { onDelete: 'set null' }),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('service_keys_hash_key').on(t.hash), index('service_keys_company_idx').on(t.companyId)],
);

/**
 * A company's connection to an outside service (`tracker_a`, `tracker_b`, `sourcehost`).
 * `site` distinguishes several connections of one provider (tracker_b sites); '' when single.
 * Secrets live only in `credentialsEnc` (AES-256-GCM); `settings` holds what may be shown.
 */
export const integrations = pgTable(
  'integrations',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    companyId: uuid('company_id')
      .notNull()
      .references(() => companies.id, { onDelete: 'cascade' }),
    provider: text('provider', { enum: ['tracker_a', 'tracker_b', 'sourcehost'] }).notNull(),
    site: text('site').notNull().default(''),
    credentialsEnc: text('credentials_enc').notNull(),
    /** The provider's settings (`src/integrations/settings.ts`), checked against its schema when saved. */
    settings: jsonb('settings').$type<IntegrationSettings>().notNull().default({}),
    createdBy: uuid('created_by').references(() => users.id, { onDelete: 'set null' }),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('integrations_company_provider_site_key').on(t.companyId, t.provider, t.site)],
);
