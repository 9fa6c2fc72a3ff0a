import { type SQL, sql } from 'drizzle-orm';
import {
  type AnyPgColumn,
  bigint,
  boolean,
  check,
  index,
  integer,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import type { JsonObject } from '../../json.ts';
import { companies, type UserBadge, users } from './identity.ts';
import { scans, workspaces } from './scanner.ts';

const createdAt = () => timestamp('created_at', { withTimezone: true }).notNull().defaultNow();

export const findingStatuses = [
  'new',
  'in_review',
  'disputed',
  'rejected',
  'spam',
  'duplicate',
  'confirmed',
  'acknowledged',
  'fixed',
  'withdrawn',
] as const;
export const severities = ['critical', 'high', 'medium', 'low', 'informational', 'gas_optimization'] as const;
/** Triage states of a scan's draft finding (null for findings filed on a repository). */
export const draftTriageStates = ['open', 'dismissed', 'published', 'fixed', 'reopened'] as const;
export const dismissalReasons = ['false_positive', 'wont_fix', 'used_in_tests'] as const;
/** How a draft of a scan compares with the scan's baseline (the previous completed scan of its branch). */
export const baselineStates = ['new', 'unchanged', 'reopened'] as const;
export const repositoryRoles = ['client', 'reviewer', 'judge', 'triager', 'admin'] as const;

/** The largest reputation (an `integer`) plus one: the author-less findings' key, last in ascending order. */
const NO_AUTHOR_REPUTATION_ASC = '2147483648';
/** The smallest reputation minus one: the author-less findings' key, last in descending order. */
const NO_AUTHOR_REPUTATION_DESC = '-2147483649';

/**
 * The sort keys of the all-findings orders that are not plain columns, as SQL over the given
 * columns of `findings`: the listing sorts by these and the `findings_visible_company_*` indexes
 * hold them, so both must come from here. Status in lifecycle order and severity from least to
 * most severe (what `_asc` means). The reward and the author's reputation and name are never
 * null: a finding without one takes a sentinel after every real key in the direction of the order (so one
 * expression, and one index, per direction), and names compare byte by byte (`collate "C"`) so
 * that the largest code point sorts after every name (docs/adr/0031).
 */
export const findingSortKeys = {
  statusRank: (status: unknown): SQL =>
    sql`array_position(${sql.raw(`'{${findingStatuses.join(',')}}'`)}::text[], ${status})`,
  severityRank: (severity: unknown): SQL =>
    sql`array_position('{gas_optimization,informational,low,medium,high,critical}'::text[], ${severity})`,
  authorReputation: (reputation: unknown, direction: 'asc' | 'desc'): SQL =>
    sql`coalesce(${reputation}::bigint, ${sql.raw(direction === 'asc' ? NO_AUTHOR_REPUTATION_ASC : NO_AUTHOR_REPUTATION_DESC)})`,
  /** Without a reward, `Infinity` ascending and `-Infinity` descending: after every amount. */
  reward: (reward: unknown, direction: 'asc' | 'desc'): SQL =>
    sql`coalesce(${reward}, ${sql.raw(direction === 'asc' ? "'Infinity'" : "'-Infinity'")}::numeric)`,
  authorName: (name: unknown, direction: 'asc' | 'desc'): SQL =>
    sql`(coalesce(${name}, ${sql.raw(direction === 'asc' ? "U&'\\+10FFFF'" : "''")}) collate "C")`,
};

/** The columns of `findings` the order indexes hold (see {@link orderIndexes}). */
interface OrderColumns {
  id: AnyPgColumn;
  number: AnyPgColumn;
  createdAt: AnyPgColumn;
  lastUpdatedAt: AnyPgColumn;
  status: AnyPgColumn;
  severity: AnyPgColumn;
  authorReputation: AnyPgColumn;
  authorName: AnyPgColumn;
  reward: AnyPgColumn;
  published: AnyPgColumn;
  repositoryId: AnyPgColumn;
}

/**
 * Keyset pages of every order but the reader's last comment within a scope — the companies a user
 * belongs to (`company`), or the repositories a member reads (`repository`): `limit` entries read
 * in order from the cursor on instead of every finding of the scope sorted for each page. The
 * expressions must stay the ones findings-listing.ts sorts by (`findingSortKeys`); a nullable key
 * has one index per direction, its null placed last by the sentinel of that direction
 * (docs/adr/0031). A company's number order has its own index, with status and severity.
 */
function orderIndexes(scope: 'company' | 'repository', scopeColumn: AnyPgColumn, t: OrderColumns) {
  const visible = sql`${t.published} and ${t.repositoryId} is not null`;
  const on = (name: string, key: SQL | AnyPgColumn) =>
    index(`findings_visible_${scope}_${name}_idx`).on(scopeColumn, key, t.id).where(visible);
  return [
    ...(scope === 'repository' ? [on('number', t.number)] : []),
    on('created', t.createdAt),
    on('updated', t.lastUpdatedAt),
    on('status_rank', findingSortKeys.statusRank(t.status)),
    on('severity_rank', findingSortKeys.severityRank(t.severity)),
    on('reputation_asc', findingSortKeys.authorReputation(t.authorReputation, 'asc')),
    on('reputation_desc', findingSortKeys.authorReputation(t.authorReputation, 'desc')),
    on('author_name_asc', findingSortKeys.authorName(t.authorName, 'asc')),
    on('author_name_desc', findingSortKeys.authorName(t.authorName, 'desc')),
    on('reward_asc', findingSortKeys.reward(t.reward, 'asc')),
    on('reward_desc', findingSortKeys.reward(t.reward, 'desc')),
  ];
}

/** Guilds of auditors; names are unique case-insensitively. */
export const guilds = pgTable(
  'guilds',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    name: text('name').notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('guilds_name_lower_key').on(sql`lower(${t.name})`)],
);

/** A review project of a company (v0 "repository"). Money columns are numeric, rendered as strings. */
export const repositories = pgTable(
  'repositories',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    companyId: uuid('company_id')
      .notNull()
      .references(() => companies.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    url: text('url').notNull().default(''),
    currencyCode: text('currency_code').notNull().default('USD'),
    kycRequired: boolean('kyc_required').notNull().default(false),
    timeframeStart: timestamp('timeframe_start', { withTimezone: true }),
    timeframeEnd: timestamp('timeframe_end', { withTimezone: true }),
    totalRewardPot: numeric('total_reward_pot').notNull().default('0'),
    submissionFee: numeric('submission_fee').notNull().default('0'),
    instructions: text('instructions').notNull().default(''),
    requiredCtfAddress: text('required_ctf_address').notNull().default(''),
    allowedSeverities: text('allowed_severities')
      .array()
      .notNull()
      .default(sql`'{critical,high,medium,low,informational,gas_optimization}'::text[]`),
    /** Whether any user may join (joinable) or only invited members. */
    isPublic: boolean('is_public').notNull().default(false),
    showAllFindings: boolean('show_all_findings').notNull().default(false),
    /** Last finding number allocated; bumped under the row lock so numbers have no gaps. */
    findingSeq: integer('finding_seq').notNull().default(0),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('repositories_company_idx').on(t.companyId)],
);

export const repositoryMembers = pgTable(
  'repository_members',
  {
    repositoryId: uuid('repository_id')
      .notNull()
      .references(() => repositories.id, { onDelete: 'cascade' }),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    role: text('role', { enum: repositoryRoles }).notNull(),
    teamId: uuid('team_id'),
    pingsLeft: integer('pings_left').notNull().default(3),
    joinedAt: timestamp('joined_at', { withTimezone: true }).notNull().defaultNow(),
    deletedAt: timestamp('deleted_at', { withTimezone: true }),
  },
  (t) => [
    primaryKey({ columns: [t.repositoryId, t.userId] }),
    index('repository_members_user_idx').on(t.userId),
    // Spending a ping is a conditional decrement; the constraint keeps any other writer honest too.
    check('repository_members_pings_left_check', sql`${t.pingsLeft} >= 0`),
  ],
);

/** Asset groups; a row with `parentId` is a sub-group. */
export const assetGroups = pgTable(
  'asset_groups',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    repositoryId: uuid('repository_id')
      .notNull()
      .references(() => repositories.id, { onDelete: 'cascade' }),
    parentId: uuid('parent_id'),
    name: text('name').notNull(),
    description: text('description').notNull().default(''),
    outOfScope: boolean('out_of_scope').notNull().default(false),
    rewards: jsonb('rewards').$type<Array<{ minReward: string; maxReward: string }>>().notNull().default([]),
    position: integer('position').notNull().default(0),
  },
  (t) => [index('asset_groups_repository_idx').on(t.repositoryId)],
);

export const assets = pgTable(
  'assets',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    assetGroupId: uuid('asset_group_id')
      .notNull()
      .references(() => assetGroups.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    description: text('description').notNull().default(''),
    reference: text('reference').notNull().default(''),
  },
  (t) => [index('assets_group_idx').on(t.assetGroupId)],
);

export const safeHarbors = pgTable('safe_harbors', {
  id: uuid('id').primaryKey().defaultRandom(),
  repositoryId: uuid('repository_id')
    .notNull()
    .unique()
    .references(() => repositories.id, { onDelete: 'cascade' }),
  description: text('description').notNull().default(''),
  reward: text('reward').notNull().default('0'),
  cap: text('cap').notNull().default('0'),
  returnAddresses: jsonb('return_addresses')
    .$type<Array<{ id: string; address: string }>>()
    .notNull()
    .default([]),
  assets: jsonb('assets')
    .$type<Array<{ id: string; name: string; description: string }>>()
    .notNull()
    .default([]),
});

export const labels = pgTable(
  'labels',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    repositoryId: uuid('repository_id').references(() => repositories.id, { onDelete: 'cascade' }),
    companyId: uuid('company_id')
      .notNull()
      .references(() => companies.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    description: text('description').notNull().default(''),
    isSystem: boolean('is_system').notNull().default(false),
    reviewerRead: boolean('reviewer_read').notNull().default(true),
    reviewerUse: boolean('reviewer_use').notNull().default(false),
    archivedAt: timestamp('archived_at', { withTimezone: true }),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('labels_repository_name_key').on(t.repositoryId, t.name),
    // Label filters match names case-insensitively; the expression index also gives the planner its statistics.
    index('labels_lower_name_idx').on(sql`lower(${t.name})`),
  ],
);

/**
 * What a finding keeps beyond its columns: the engine's details of a scan finding (written by the
 * scan job from the engine's vulnerability); empty for a finding written by hand.
 */
export interface FindingDetails {
  remediation?: string;
  ruleTitle?: string;
  snippet?: string;
  contract?: string;
  function?: string;
  swc?: string;
  cwe?: string;
}

/**
 * Findings of both APIs. A finding always belongs to a company; to a repository when filed on one
 * (v0, `number` unique per repository); to a workspace when the scanner made it, where it is a
 * draft (`published = false`) identified by its `fingerprint`.
 */
export const findings = pgTable(
  'findings',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    companyId: uuid('company_id')
      .notNull()
      .references(() => companies.id, { onDelete: 'cascade' }),
    repositoryId: uuid('repository_id').references(() => repositories.id, { onDelete: 'cascade' }),
    number: integer('number'),
    workspaceId: uuid('workspace_id').references(() => workspaces.id, { onDelete: 'set null' }),
    fingerprint: text('fingerprint'),
    ruleId: text('rule_id'),
    published: boolean('published').notNull().default(true),
    title: text('title').notNull(),
    description: text('description').notNull().default(''),
    status: text('status', { enum: findingStatuses }).notNull().default('new'),
    severity: text('severity', { enum: severities }).notNull(),
    category: text('category'),
    confidence: text('confidence'),
    identifiers: jsonb('identifiers')
      .$type<Array<{ type: string; name: string; value: string }>>()
      .notNull()
      .default([]),
    location: jsonb('location').$type<{ file: string; startLine: number; endLine: number } | null>(),
    details: jsonb('details').$type<FindingDetails>().notNull().default({}),
    createdBy: uuid('created_by').references(() => users.id, { onDelete: 'set null' }),
    attributedTo: uuid('attributed_to'),
    assignedTo: uuid('assigned_to').references(() => users.id, { onDelete: 'set null' }),
    assetGroupId: uuid('asset_group_id').references(() => assetGroups.id, { onDelete: 'set null' }),
    duplicateOf: uuid('duplicate_of'),
    duplicateGroupDescription: text('duplicate_group_description'),
    reward: numeric('reward'),
    fixedBy: text('fixed_by').array().notNull().default(sql`'{}'::text[]`),
    note: text('note'),
    paymentId: uuid('payment_id'),
    locked: boolean('locked').notNull().default(false),
    safeHarborAssetIds: text('safe_harbor_asset_ids').array().notNull().default(sql`'{}'::text[]`),
    /**
     * When the last comment of each visibility was written (`last_comment_at`: public). A user's
     * `lastCommentAt` is the latest of the ones they may read (access policy), so that neither the
     * field nor the `last_comment_*` orders reveal comments the user may not see.
     */
    lastCommentAt: timestamp('last_comment_at', { withTimezone: true }),
    lastPrivateCommentAt: timestamp('last_private_comment_at', { withTimezone: true }),
    lastInternalCommentAt: timestamp('last_internal_comment_at', { withTimezone: true }),
    lastHiddenCommentAt: timestamp('last_hidden_comment_at', { withTimezone: true }),
    /**
     * Per visibility, the author of that last comment and the time of the last comment of that
     * visibility by anyone else. The latest readable comment a user did not write is then a
     * column read (`author <> user ? last : other`), which makes the unread filter a row test
     * plus one read-marker probe instead of a count over comments. Deleted comments are not
     * included; no foreign key (a deleted user's id simply never matches).
     */
    lastCommentAuthorId: uuid('last_comment_author_id'),
    lastCommentOtherAt: timestamp('last_comment_other_at', { withTimezone: true }),
    lastPrivateCommentAuthorId: uuid('last_private_comment_author_id'),
    lastPrivateCommentOtherAt: timestamp('last_private_comment_other_at', { withTimezone: true }),
    lastInternalCommentAuthorId: uuid('last_internal_comment_author_id'),
    lastInternalCommentOtherAt: timestamp('last_internal_comment_other_at', { withTimezone: true }),
    lastHiddenCommentAuthorId: uuid('last_hidden_comment_author_id'),
    lastHiddenCommentOtherAt: timestamp('last_hidden_comment_other_at', { withTimezone: true }),
    /**
     * A draft's triage (drafts only: `published = false` rows a scan wrote). `dismissed` and
     * `published` stick across later scans; `fixed` and `reopened` follow the scans of its branch.
     */
    triageState: text('triage_state', { enum: draftTriageStates }),
    dismissedReason: text('dismissed_reason', { enum: dismissalReasons }),
    dismissedComment: text('dismissed_comment'),
    dismissedBy: uuid('dismissed_by').references(() => users.id, { onDelete: 'set null' }),
    dismissedAt: timestamp('dismissed_at', { withTimezone: true }),
    /** The repository finding a draft was published as (one per draft: publishing is idempotent). */
    publishedFindingId: uuid('published_finding_id'),
    publishedBy: uuid('published_by').references(() => users.id, { onDelete: 'set null' }),
    publishedAt: timestamp('published_at', { withTimezone: true }),
    /** On a published finding: the scan (and so the commit) its draft was published from. */
    sourceScanId: uuid('source_scan_id'),
    createdAt: createdAt(),
    lastUpdatedAt: timestamp('last_updated_at', { withTimezone: true }).notNull().defaultNow(),
    /**
     * When the finding last became `fixed` (null while it is not fixed). Set by a trigger on every
     * status write (migration 0039), so that each path that changes a status keeps it right.
     */
    fixedAt: timestamp('fixed_at', { withTimezone: true }),
    /**
     * The author's reputation and lowercased username, copied from `users` (null without an
     * author) so that the `reputation_*` and `username_*` orders read an index of `findings`.
     * Kept by triggers (migration 0036): set from `created_by` on every insert and change of it,
     * and rewritten on the author's findings when their reputation or username changes, in the
     * same transaction. Never written by the application (docs/adr/0031).
     */
    authorReputation: integer('author_reputation'),
    authorName: text('author_name'),
  },
  (t) => [
    uniqueIndex('findings_repository_number_key').on(t.repositoryId, t.number),
    uniqueIndex('findings_published_finding_key')
      .on(t.publishedFindingId)
      .where(sql`${t.publishedFindingId} is not null`),
    // A workspace's drafts by triage state (the draft listings and the comparison at completion).
    index('findings_workspace_triage_idx')
      .on(t.workspaceId, t.triageState)
      .where(sql`${t.triageState} is not null`),
    uniqueIndex('findings_workspace_fingerprint_key')
      .on(t.workspaceId, t.fingerprint)
      .where(sql`${t.fingerprint} is not null`),
    index('findings_company_idx').on(t.companyId),
    index('findings_repository_created_idx').on(t.repositoryId, t.createdAt),
    index('findings_created_by_idx').on(t.createdBy),
    // Visibility by repository (and the reviewer's own findings) or by company: counts of what a
    // user sees are index-only scans of these instead of heap visits.
    index('findings_visible_repository_idx')
      .on(t.repositoryId, t.createdBy)
      .where(sql`${t.published} and ${t.repositoryId} is not null`),
    index('findings_visible_company_idx')
      .on(t.companyId, t.repositoryId)
      .where(sql`${t.published} and ${t.repositoryId} is not null`),
    // Visible findings with at least one comment: the unread filter and the non-null part of the
    // last_comment orders read only these (the predicate is FINDING_HAS_COMMENTS of comment-access.ts).
    index('findings_commented_company_idx')
      .on(t.companyId, t.repositoryId)
      .where(
        sql`${t.published} and ${t.repositoryId} is not null and (${t.lastCommentAt} is not null or ${t.lastPrivateCommentAt} is not null or ${t.lastInternalCommentAt} is not null or ${t.lastHiddenCommentAt} is not null)`,
      ),
    index('findings_commented_repository_idx')
      .on(t.repositoryId, t.createdBy)
      .where(
        sql`${t.published} and ${t.repositoryId} is not null and (${t.lastCommentAt} is not null or ${t.lastPrivateCommentAt} is not null or ${t.lastInternalCommentAt} is not null or ${t.lastHiddenCommentAt} is not null)`,
      ),
    // Duplicate groups (payloads, filter_for=with_duplicates) look findings up by their root.
    index('findings_duplicate_of_idx').on(t.duplicateOf).where(sql`${t.duplicateOf} is not null`),
    // A change of a user or of an asset group rebuilds the bodies (finding_bodies) of the
    // findings assigned to that user or filed under that group: found by these.
    index('findings_assigned_to_idx').on(t.assignedTo).where(sql`${t.assignedTo} is not null`),
    index('findings_asset_group_idx').on(t.assetGroupId).where(sql`${t.assetGroupId} is not null`),
    // Keyset pages of the default order (number, id) within the companies a user belongs to: the
    // first page reads `limit` entries in order instead of sorting every finding of the company,
    // and the status and severity filters and their count are answered from the index alone
    // (status and severity trail the order, as Drizzle has no INCLUDE).
    index('findings_visible_company_number_idx')
      .on(t.companyId, t.number, t.id, t.status, t.severity)
      .where(sql`${t.published} and ${t.repositoryId} is not null`),
    // The filtered total of a company's findings under status and severity filters (the listing
    // counts them on every request): the matching entries only, instead of every finding of the
    // company read through the number index and tested one by one.
    index('findings_visible_company_status_idx')
      .on(t.companyId, t.status, t.severity, t.id)
      .where(sql`${t.published} and ${t.repositoryId} is not null`),
    // The same for a repository (its members read it, and a company user filtering by it).
    index('findings_visible_repository_status_idx')
      .on(t.repositoryId, t.status, t.severity, t.id)
      .where(sql`${t.published} and ${t.repositoryId} is not null`),
    ...orderIndexes('company', t.companyId, t),
    ...orderIndexes('repository', t.repositoryId, t),
    // Keyset pages of the default order (number, id) for users who see many repositories.
    index('findings_published_number_idx').on(t.number, t.id).where(sql`${t.published}`),
    // severity_asc/desc order by this rank; the expression must stay the one findings-listing.ts sorts by.
    index('findings_published_severity_rank_idx')
      .on(
        sql`array_position('{gas_optimization,informational,low,medium,high,critical}'::text[], ${t.severity})`,
        t.id,
      )
      .where(sql`${t.published}`),
  ],
);

/**
 * How many published findings of a repository have each status and severity. Kept exact by
 * statement triggers on `findings` (migration 0006) in the transaction of every write, so that
 * `filteredTotal` of listings that filter only by repository, status and severity is a small sum
 * instead of a scan. No foreign keys: a cascaded delete of a repository decrements its rows.
 */
export const findingCounts = pgTable(
  'finding_counts',
  {
    repositoryId: uuid('repository_id').notNull(),
    companyId: uuid('company_id').notNull(),
    status: text('status', { enum: findingStatuses }).notNull(),
    severity: text('severity', { enum: severities }).notNull(),
    n: integer('n').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.repositoryId, t.companyId, t.status, t.severity] }),
    index('finding_counts_company_idx').on(t.companyId),
  ],
);

/**
 * The part of each finding's API payload that every reader sees alike (its fields, related files,
 * author and assignee, repository and company, asset group, safe-harbor assets and labels), as
 * `jsonb` built by the view `finding_body_source` and written by triggers in the transaction of
 * every change of what it is made of. The view and the triggers are generated from one table
 * (src/platform/findings/finding-bodies.source.ts).
 */
export const findingBodies = pgTable('finding_bodies', {
  findingId: uuid('finding_id')
    .primaryKey()
    .references(() => findings.id, { onDelete: 'cascade' }),
  body: jsonb('body').notNull(),
});

/** Which findings a scan reported (a finding found again by a later scan is linked again). */
export const scanFindings = pgTable(
  'scan_findings',
  {
    scanId: uuid('scan_id')
      .notNull()
      .references(() => scans.id, { onDelete: 'cascade' }),
    findingId: uuid('finding_id')
      .notNull()
      .references(() => findings.id, { onDelete: 'cascade' }),
    location: jsonb('location').$type<{ file: string; startLine: number; endLine: number }>().notNull(),
    /** Against the scan's baseline: null when the scan compared with nothing (written at completion). */
    baselineState: text('baseline_state', { enum: baselineStates }),
  },
  (t) => [primaryKey({ columns: [t.scanId, t.findingId] })],
);

/** Drafts of a scan's baseline that the scan did not find again: what the scan fixed. */
export const scanFixedDrafts = pgTable(
  'scan_fixed_drafts',
  {
    scanId: uuid('scan_id')
      .notNull()
      .references(() => scans.id, { onDelete: 'cascade' }),
    findingId: uuid('finding_id')
      .notNull()
      .references(() => findings.id, { onDelete: 'cascade' }),
    /** Where the baseline saw it. */
    location: jsonb('location').$type<{ file: string; startLine: number; endLine: number }>().notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.scanId, t.findingId] }),
    index('scan_fixed_drafts_finding_idx').on(t.findingId),
  ],
);

/**
 * A published finding's scan timeline: each completed scan of its workspace's branch that still
 * found its draft (`present`) or no longer did (`not_reproduced`).
 */
export const findingScanEvents = pgTable(
  'finding_scan_events',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    findingId: uuid('finding_id')
      .notNull()
      .references(() => findings.id, { onDelete: 'cascade' }),
    scanId: uuid('scan_id')
      .notNull()
      .references(() => scans.id, { onDelete: 'cascade' }),
    kind: text('kind', { enum: ['published', 'present', 'not_reproduced', 'marked_fixed'] }).notNull(),
    commit: text('commit'),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('finding_scan_events_key').on(t.findingId, t.scanId, t.kind)],
);

/** A company's draft triage settings: who besides managers triages, and automatic `fixed`. */
export const draftSettings = pgTable('draft_settings', {
  companyId: uuid('company_id')
    .primaryKey()
    .references(() => companies.id, { onDelete: 'cascade' }),
  /** Members (not managers) a manager allows to triage and publish drafts. */
  triagerUserIds: uuid('triager_user_ids').array().notNull().default(sql`'{}'::uuid[]`),
  /** Mark a published finding `fixed` when a later scan no longer reproduces it (off: only people change status). */
  autoMarkFixed: boolean('auto_mark_fixed').notNull().default(false),
  updatedBy: uuid('updated_by').references(() => users.id, { onDelete: 'set null' }),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

export const findingRelatedFiles = pgTable(
  'finding_related_files',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    findingId: uuid('finding_id')
      .notNull()
      .references(() => findings.id, { onDelete: 'cascade' }),
    path: text('path').notNull(),
    startLine: integer('start_line'),
    endLine: integer('end_line'),
    language: text('language'),
    relevantContent: text('relevant_content'),
    /** The commit the lines and content were read at, when known (ADR 0036). */
    commit: text('commit'),
  },
  (t) => [
    index('finding_related_files_finding_idx').on(t.findingId),
    index('finding_related_files_path_idx').on(t.path),
  ],
);

export const findingLabels = pgTable(
  'finding_labels',
  {
    findingId: uuid('finding_id')
      .notNull()
      .references(() => findings.id, { onDelete: 'cascade' }),
    labelId: uuid('label_id')
      .notNull()
      .references(() => labels.id, { onDelete: 'cascade' }),
  },
  (t) => [
    primaryKey({ columns: [t.findingId, t.labelId] }),
    // Label filters read the findings of a few labels from the index alone.
    index('finding_labels_label_finding_idx').on(t.labelId, t.findingId),
  ],
);

export const comments = pgTable(
  'comments',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    findingId: uuid('finding_id')
      .notNull()
      .references(() => findings.id, { onDelete: 'cascade' }),
    parentId: uuid('parent_id'),
    authorId: uuid('author_id').references(() => users.id, { onDelete: 'set null' }),
    content: text('content').notNull(),
    visibility: text('visibility', { enum: ['public', 'private', 'internal', 'hidden'] })
      .notNull()
      .default('public'),
    createdAt: createdAt(),
    /** Set when the author edits the content. */
    editedAt: timestamp('edited_at', { withTimezone: true }),
    /** Soft delete: the comment keeps its place in the thread, its content is no longer shown. */
    deletedAt: timestamp('deleted_at', { withTimezone: true }),
  },
  (t) => [
    index('comments_finding_idx').on(t.findingId, t.createdAt),
    index('comments_parent_idx').on(t.parentId).where(sql`${t.parentId} is not null`),
  ],
);

/** The last time a user read a finding's comments; comments after it are unread. */
export const commentReads = pgTable(
  'comment_reads',
  {
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    findingId: uuid('finding_id')
      .notNull()
      .references(() => findings.id, { onDelete: 'cascade' }),
    readAt: timestamp('read_at', { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.findingId] })],
);

/**
 * What a `comment_ping` notification carries (the only kind): the comment, its finding and
 * repository as they were when the comment was written. Written by the comment service only.
 */
export interface CommentPingPayload {
  commentId: string;
  findingId: string;
  findingNumber: number | null;
  findingTitle: string;
  repositoryId: string;
  repositoryName: string;
  companyId: string;
  authorId: string;
  /** Null when a service key wrote the comment. */
  authorUsername: string | null;
  visibility: 'public' | 'private' | 'internal' | 'hidden';
  /** The comment's first characters. */
  excerpt: string;
}

export const notifications = pgTable(
  'notifications',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    kind: text('kind', { enum: ['comment_ping'] }).notNull(),
    /** The comment whose ping caused it: one notification per user per comment. */
    commentId: uuid('comment_id').references(() => comments.id, { onDelete: 'cascade' }),
    payload: jsonb('payload').$type<CommentPingPayload>().notNull(),
    readAt: timestamp('read_at', { withTimezone: true }),
    createdAt: createdAt(),
  },
  (t) => [
    index('notifications_user_idx').on(t.userId, t.createdAt),
    uniqueIndex('notifications_user_comment_key')
      .on(t.userId, t.commentId)
      .where(sql`${t.commentId} is not null`),
  ],
);

export const findingViews = pgTable('finding_views', {
  id: uuid('id').primaryKey().defaultRandom(),
  repositoryId: uuid('repository_id')
    .notNull()
    .references(() => repositories.id, { onDelete: 'cascade' }),
  userId: uuid('user_id')
    .notNull()
    .references(() => users.id, { onDelete: 'cascade' }),
  personal: boolean('personal').notNull(),
  name: text('name').notNull(),
  filter: text('filter').notNull(),
  description: text('description'),
  columns: text('columns').array(),
  createdAt: createdAt(),
});

/**
 * What happened to a finding, one row per change: written by the triggers of migration 0038 in the
 * transaction of each write to `findings` (status, severity, assignee, duplicate), `finding_labels`
 * and `finding_tickets`, so that no writer can change a finding without a trace; other writers
 * (the scanner's "still present" / "not reproduced") insert their own kinds. The actor is the user
 * the writing transaction names (`vigil.actor`, set by the findings service), null for the system.
 * Read through the access policy (`GET …/findings/{finding_ref}/events`, ADR 0036).
 */
export const findingEvents = pgTable(
  'finding_events',
  {
    /** Increasing: orders the events of one transaction (which share `created_at`) as written. */
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    findingId: uuid('finding_id')
      .notNull()
      .references(() => findings.id, { onDelete: 'cascade' }),
    /** `status`, `severity`, `assignee`, `label_added`, `label_removed`, `duplicate`, `ticket_linked`, … */
    kind: text('kind').notNull(),
    /** The kind's facts as ids and values (`{from, to}`, `{labelId}`, …); names are read when shown. */
    data: jsonb('data').$type<JsonObject>().notNull().default({}),
    actorId: uuid('actor_id').references(() => users.id, { onDelete: 'set null' }),
    createdAt: createdAt(),
  },
  (t) => [index('finding_events_finding_idx').on(t.findingId, t.createdAt, t.id)],
);

/** Repository change log: one row per update, with old and new values of the changed fields. */
export const repositoryEvents = pgTable(
  'repository_events',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    repositoryId: uuid('repository_id')
      .notNull()
      .references(() => repositories.id, { onDelete: 'cascade' }),
    /** The changed fields (API naming) before and after, JSON as the API shows them. */
    oldValue: jsonb('old_value').$type<JsonObject>().notNull(),
    newValue: jsonb('new_value').$type<JsonObject>().notNull(),
    updatedBy: uuid('updated_by').references(() => users.id, { onDelete: 'set null' }),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('repository_events_repository_idx').on(t.repositoryId, t.updatedAt)],
);

export const auditActions = [
  'user_invited',
  'user_auto_joined',
  'user_disabled',
  'user_reenabled',
  'company_role_changed',
  'sourcehost_integration_added',
  'sourcehost_integration_removed',
  // Extensions (ADR 0017): entries that concern no user have a null target; `details` says what.
  'invitation_revoked',
  'invitation_declined',
  'service_key_created',
  'service_key_revoked',
  'sso_rule_added',
  'sso_rule_removed',
  'integration_connected',
  'integration_updated',
  'integration_disconnected',
  'sourcehost_repository_linked',
  'sourcehost_repository_unlinked',
  'notification_webhook_set',
  'notification_webhook_removed',
  'credits_granted',
  'repository_member_added',
  'repository_member_changed',
  'repository_member_removed',
  'session_signed_in',
  'findings_bulk_triaged',
  // Draft triage (ADR 0023): `details` names the drafts, the reason or the finding.
  'draft_dismissed',
  'draft_reopened',
  'draft_published',
  'draft_settings_changed',
] as const;

export const auditLog = pgTable(
  'audit_log',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    companyId: uuid('company_id')
      .notNull()
      .references(() => companies.id, { onDelete: 'cascade' }),
    action: text('action', { enum: auditActions }).notNull(),
    targetUserId: uuid('target_user_id').references(() => users.id, { onDelete: 'set null' }),
    performedBy: uuid('performed_by').references(() => users.id, { onDelete: 'set null' }),
    sourcehostAccountName: text('sourcehost_account_name'),
    details: jsonb('details').$type<JsonObject>().notNull().default({}),
    createdAt: createdAt(),
  },
  (t) => [index('audit_log_company_created_idx').on(t.companyId, t.createdAt, t.id)],
);

export const ssoEnforcementRules = pgTable(
  'sso_enforcement_rules',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    companyId: uuid('company_id')
      .notNull()
      .references(() => companies.id, { onDelete: 'cascade' }),
    domain: text('domain').notNull(),
    createdBy: uuid('created_by').references(() => users.id, { onDelete: 'set null' }),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('sso_rules_domain_key').on(sql`lower(${t.domain})`)],
);

/**
 * What a report keeps of its engagement as it was when the report was made, in the shapes API v0
 * shows (`AuditorPublicProfile`, `ReportFinding`, `FindingStat` of the reports schemas; the
 * reports service writes these and renders them, so the compiler holds the two together). Dates
 * are ISO date-time strings.
 */
export interface StoredReportSnapshot {
  teamMembers: StoredReportTeamMember[];
  findings: StoredReportFinding[];
  findingStats: StoredReportFindingStat[];
}

/** A team member's public profile in a report snapshot. */
export interface StoredReportTeamMember {
  id: string;
  name: string;
  username: string;
  avatar: string | null;
  isBot: boolean;
  verifiedProfile: boolean;
  isNdaSigned: boolean;
  reputation: number;
  skills: string[];
  badges: UserBadge[];
  createdAt: string;
  sourcehost: string | null;
  microblog: string | null;
  tagline: string | null;
  bio: string | null;
  website: string | null;
  guildAffiliation: string | null;
}

/** A valid finding in a report snapshot, with its files and its author's short summary. */
export interface StoredReportFinding {
  id: string;
  number: number | null;
  attributedTo: string | null;
  title: string;
  description: string;
  createdBy: {
    userId: string;
    name: string;
    username: string;
    avatar: string | null;
    disabledAt: string | null;
  } | null;
  createdAt: string;
  fixedBy: string[];
  relatedFiles: Array<{
    id: string;
    path: string;
    lines: { start: number | null; end: number | null };
    language: string | null;
    relevantContent: string | null;
  }>;
  companyName: string;
  companyLogo: string | null;
  severity: (typeof severities)[number];
  status: (typeof findingStatuses)[number];
}

/** The counts of one severity in a report snapshot. */
export interface StoredReportFindingStat {
  totalCount: number;
  fixedCount: number;
  severity: (typeof severities)[number];
}

/** A report's snapshot before anything is in it (no team, no findings). */
export const EMPTY_REPORT_SNAPSHOT: StoredReportSnapshot = {
  teamMembers: [],
  findings: [],
  findingStats: [],
};

export const reports = pgTable(
  'reports',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    companyId: uuid('company_id')
      .notNull()
      .references(() => companies.id, { onDelete: 'cascade' }),
    repositoryId: uuid('repository_id').references(() => repositories.id, { onDelete: 'set null' }),
    engagementId: uuid('engagement_id'),
    guildId: uuid('guild_id').references(() => guilds.id, { onDelete: 'set null' }),
    isPrivate: boolean('is_private').notNull().default(true),
    projectTitle: text('project_title').notNull(),
    clientName: text('client_name').notNull(),
    clientLogo: text('client_logo').notNull().default(''),
    clientWebsite: text('client_website').notNull().default(''),
    seoTitle: text('seo_title').notNull().default(''),
    seoDescription: text('seo_description').notNull().default(''),
    description: text('description').notNull().default(''),
    reportPdfLink: text('report_pdf_link').notNull().default(''),
    repositoryLinks: text('repository_links').array().notNull().default(sql`'{}'::text[]`),
    commitHashes: text('commit_hashes').array().notNull().default(sql`'{}'::text[]`),
    typeOfProject: text('type_of_project').array().notNull().default(sql`'{}'::text[]`),
    engagementStartDate: timestamp('engagement_start_date', { withTimezone: true }),
    engagementEndDate: timestamp('engagement_end_date', { withTimezone: true }),
    /** Team, findings and statistics as they were when the report was made. */
    snapshot: jsonb('snapshot').$type<StoredReportSnapshot>().notNull().default(EMPTY_REPORT_SNAPSHOT),
    createdBy: uuid('created_by').references(() => users.id, { onDelete: 'set null' }),
    createdAt: createdAt(),
    publishedAt: timestamp('published_at', { withTimezone: true }),
  },
  (t) => [index('reports_published_idx').on(t.publishedAt, t.id)],
);

export const aiConversations = pgTable('ai_conversations', {
  id: uuid('id').primaryKey().defaultRandom(),
  repositoryId: uuid('repository_id')
    .notNull()
    .references(() => repositories.id, { onDelete: 'cascade' }),
  userId: uuid('user_id')
    .notNull()
    .references(() => users.id, { onDelete: 'cascade' }),
  createdAt: createdAt(),
});

export const aiMessages = pgTable(
  'ai_messages',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    conversationId: uuid('conversation_id')
      .notNull()
      .references(() => aiConversations.id, { onDelete: 'cascade' }),
    role: text('role', { enum: ['user', 'assistant'] }).notNull(),
    content: text('content').notNull(),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    createdAt: createdAt(),
  },
  (t) => [index('ai_messages_conversation_idx').on(t.conversationId, t.createdAt)],
);
