import { sql } from 'drizzle-orm';
import {
  bigint,
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
import type { ScanMessage, ScanStats, ThreatModel } from '../../engine/types.ts';
import type { JsonValue } from '../../json.ts';
import { companies, serviceKeys } from './identity.ts';

/**
 * A scan source as stored: the request's source after validation (`ScanSourceSchema` of API v1,
 * with a local archive's mount path resolved). Reading it back needs no check: only the scan
 * service writes it, from the validated request.
 */
export type StoredScanSource =
  | { kind: 'sourcehost'; repository: string; commit: string }
  | { kind: 'local'; archiveId: string; sha256: string; path?: string };

/** What a completed scan stores of the engine's result besides its findings. */
export interface StoredScanReport {
  messages: ScanMessage[];
  stats: ScanStats;
}

const createdAt = () => timestamp('created_at', { withTimezone: true }).notNull().defaultNow();

/** A place in a source repository that scans run against: `prefix` is the path within it. */
export const workspaces = pgTable(
  'workspaces',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    companyId: uuid('company_id')
      .notNull()
      .references(() => companies.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    prefix: text('prefix').notNull().default(''),
    /** `owner/name` of the linked sourcehost repository, or null for upload-only workspaces. */
    repository: text('repository'),
    active: boolean('active').notNull().default(true),
    /** Branches whose pushes start a scan (source-host webhook); empty: the repository's default branch. */
    watchBranches: text('watch_branches').array().notNull().default(sql`'{}'::text[]`),
    /** Scan type of push- and pull-request-triggered scans. */
    autoScanType: text('auto_scan_type', { enum: ['lite', 'standard', 'audit'] })
      .notNull()
      .default('standard'),
    /** Lowest severity that makes a triggered scan's commit status `failure`. */
    failOn: text('fail_on', { enum: ['critical', 'high', 'medium', 'low', 'informational'] })
      .notNull()
      .default('high'),
    createdAt: createdAt(),
  },
  (t) => [index('workspaces_company_repo_idx').on(t.companyId, t.repository)],
);

/** One upload session: a signed URL that takes one tar.gz until completion. */
export const sourceUploads = pgTable(
  'source_uploads',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    companyId: uuid('company_id')
      .notNull()
      .references(() => companies.id, { onDelete: 'cascade' }),
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    filename: text('filename').notNull(),
    declaredSizeBytes: bigint('declared_size_bytes', { mode: 'number' }),
    maxBytes: bigint('max_bytes', { mode: 'number' }).notNull(),
    objectKey: text('object_key').notNull(),
    status: text('status', { enum: ['pending', 'received', 'completed', 'expired'] })
      .notNull()
      .default('pending'),
    receivedBytes: bigint('received_bytes', { mode: 'number' }),
    archiveId: uuid('archive_id'),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    createdAt: createdAt(),
    completedAt: timestamp('completed_at', { withTimezone: true }),
  },
  (t) => [index('source_uploads_expiry_idx').on(t.status, t.expiresAt)],
);

/** A verified archive, immutable once created. */
export const archives = pgTable(
  'archives',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    companyId: uuid('company_id')
      .notNull()
      .references(() => companies.id, { onDelete: 'cascade' }),
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    uploadId: uuid('upload_id').notNull(),
    objectKey: text('object_key').notNull(),
    sha256: text('sha256').notNull(),
    sizeBytes: bigint('size_bytes', { mode: 'number' }).notNull(),
    fileCount: integer('file_count').notNull(),
    expandedBytes: bigint('expanded_bytes', { mode: 'number' }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('archives_upload_key').on(t.uploadId), index('archives_company_idx').on(t.companyId)],
);

export const scanStatuses = ['preparing', 'queued', 'running', 'completed', 'failed', 'cancelled'] as const;
export const scanTypes = ['lite', 'standard', 'audit'] as const;

export const scans = pgTable(
  'scans',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    companyId: uuid('company_id')
      .notNull()
      .references(() => companies.id, { onDelete: 'cascade' }),
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id),
    type: text('type', { enum: scanTypes }).notNull(),
    status: text('status', { enum: scanStatuses }).notNull().default('preparing'),
    /** The request's sources as given (sourcehost commit or local archives). */
    sources: jsonb('sources').$type<StoredScanSource[]>().notNull(),
    prefix: text('prefix').notNull().default(''),
    cost: integer('cost').notNull(),
    /** The engine's threat model, written by the threat-model job. */
    threatModel: jsonb('threat_model').$type<ThreatModel>(),
    /** Written when the scan completes. */
    report: jsonb('report').$type<StoredScanReport>(),
    filesTotal: integer('files_total').notNull().default(0),
    filesDone: integer('files_done').notNull().default(0),
    findingsCount: integer('findings_count').notNull().default(0),
    /**
     * Written when the scan completes: files whose analysis exceeded the per-file budget (only
     * the cheap passes ran on them), for the scan's status.
     */
    filesOverBudget: text('files_over_budget').array(),
    errorCode: text('error_code'),
    errorMessage: text('error_message'),
    createdByKey: uuid('created_by_key').references(() => serviceKeys.id, { onDelete: 'set null' }),
    /** The branch the scanned commit is on (pull requests: the head branch), when known. */
    branch: text('branch'),
    /** The scanned commit: the sourcehost commit, or the one a client names for an upload. */
    commit: text('commit'),
    /** A pull-request scan: it compares with its base branch and never changes the workspace's drafts. */
    pullRequest: boolean('pull_request').notNull().default(false),
    /**
     * The baseline: asked for (a scan id), or written at completion (the latest completed scan of
     * `baselineBranch`, or of the scan's own branch). Null after completion: compared with nothing.
     */
    baselineScanId: uuid('baseline_scan_id'),
    baselineBranch: text('baseline_branch'),
    createdAt: createdAt(),
    startedAt: timestamp('started_at', { withTimezone: true }),
    completedAt: timestamp('completed_at', { withTimezone: true }),
    cancelledAt: timestamp('cancelled_at', { withTimezone: true }),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('scans_company_idx').on(t.companyId, t.createdAt),
    // A workspace's scans newest first (the scan list filtered by workspace).
    index('scans_workspace_created_idx').on(t.workspaceId, t.createdAt, t.id),
    // The latest completed scan of a workspace's branch (the baseline of the next one).
    index('scans_workspace_branch_completed_idx')
      .on(t.workspaceId, t.branch, t.completedAt)
      .where(sql`${t.status} = 'completed' and not ${t.pullRequest}`),
  ],
);

/** Archives a scan reads; an archive referenced here is kept as long as the scan. */
export const scanArchives = pgTable(
  'scan_archives',
  {
    scanId: uuid('scan_id')
      .notNull()
      .references(() => scans.id, { onDelete: 'cascade' }),
    archiveId: uuid('archive_id')
      .notNull()
      .references(() => archives.id),
    mountPath: text('mount_path').notNull().default(''),
    position: integer('position').notNull(),
  },
  (t) => [primaryKey({ columns: [t.scanId, t.archiveId, t.mountPath] })],
);

/** Stored outcome of a request made with an Idempotency-Key, per organization. */
export const idempotencyRecords = pgTable(
  'idempotency_records',
  {
    companyId: uuid('company_id')
      .notNull()
      .references(() => companies.id, { onDelete: 'cascade' }),
    key: text('key').notNull(),
    fingerprint: text('fingerprint').notNull(),
    state: text('state', { enum: ['in_progress', 'completed'] }).notNull(),
    /** Identifies the request holding an `in_progress` claim; a taken-over claim gets a new one. */
    claimId: uuid('claim_id'),
    responseStatus: integer('response_status'),
    /** The answer replayed for the key: the operation's body, or `{ error }` for a stored 4xx. */
    responseBody: jsonb('response_body').$type<JsonValue>(),
    lockedUntil: timestamp('locked_until', { withTimezone: true }),
    createdAt: createdAt(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.companyId, t.key] }), index('idempotency_expiry_idx').on(t.expiresAt)],
);

/**
 * Append-only credit ledger. Balances are sums over it: `grant` adds purchased credits,
 * `reserve` holds credits for a scan, `release` returns a reservation, `consume` turns a
 * reservation into use, `refund` returns consumed credits. One row per (scan, kind) at most.
 */
export const creditLedger = pgTable(
  'credit_ledger',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    companyId: uuid('company_id')
      .notNull()
      .references(() => companies.id, { onDelete: 'cascade' }),
    kind: text('kind', { enum: ['grant', 'reserve', 'release', 'consume', 'refund'] }).notNull(),
    amount: integer('amount').notNull(),
    scanId: uuid('scan_id'),
    note: text('note'),
    createdAt: createdAt(),
  },
  (t) => [
    index('credit_ledger_company_idx').on(t.companyId),
    uniqueIndex('credit_ledger_scan_kind_key').on(t.scanId, t.kind).where(sql`${t.scanId} is not null`),
  ],
);

/** Per-company running balance, the row that serializes reservations. */
export const creditAccounts = pgTable('credit_accounts', {
  companyId: uuid('company_id')
    .primaryKey()
    .references(() => companies.id, { onDelete: 'cascade' }),
  purchased: integer('purchased').notNull().default(0),
  used: integer('used').notNull().default(0),
  reserved: integer('reserved').notNull().default(0),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});
