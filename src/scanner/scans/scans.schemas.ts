import { type Static, Type } from '@sinclair/typebox';
import { DateTimeSchema, Nullable, ref, UuidSchema } from '../../http/schemas.ts';
import { IDEMPOTENCY_KEY_MAX_LENGTH, IDEMPOTENCY_KEY_PATTERN } from '../idempotency/idempotency.service.ts';

export const ScanTypeSchema = Type.Union(
  [Type.Literal('lite'), Type.Literal('standard'), Type.Literal('audit')],
  {
    description:
      'lite: secrets and cheap syntactic rules; standard: plus data-flow rules; audit: plus cross-contract analysis.',
  },
);

export const ScanStatusValueSchema = Type.Union([
  Type.Literal('preparing'),
  Type.Literal('queued'),
  Type.Literal('running'),
  Type.Literal('completed'),
  Type.Literal('failed'),
  Type.Literal('cancelled'),
]);

/** A commit of a repository on the connected sourcehost. */
export const SourcehostScanSourceSchema = Type.Object(
  {
    kind: Type.Literal('sourcehost'),
    repository: Type.String({ minLength: 3, maxLength: 201, description: '`owner/name`' }),
    commit: Type.String({ minLength: 1, maxLength: 255, description: 'The full 40-hex commit id.' }),
  },
  { additionalProperties: false },
);

/** A completed local-source archive (from completeSourceUpload). */
export const LocalScanSourceSchema = Type.Object(
  {
    kind: Type.Literal('local'),
    archiveId: UuidSchema,
    sha256: Type.String({ pattern: '^[A-Fa-f0-9]{64}$' }),
    path: Type.Optional(
      Type.String({
        maxLength: 1024,
        description: 'Repository folder the archive root is placed at; default the root.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const ScanSourceSchema = Type.Union([SourcehostScanSourceSchema, LocalScanSourceSchema]);
export type ScanSource = Static<typeof ScanSourceSchema>;

export const CreateScanRequestSchema = Type.Object(
  {
    type: ScanTypeSchema,
    workspaceId: Type.Optional(UuidSchema),
    prefix: Type.Optional(
      Type.String({ maxLength: 1024, description: 'Path within the source repository.' }),
    ),
    scanSources: Type.Array(ScanSourceSchema, { minItems: 1, maxItems: 20 }),
    startMode: Type.Optional(
      Type.Literal('auto', { description: 'The paid scan starts once the threat model is built.' }),
    ),
    branch: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        description:
          'Extension: the branch of the scanned commit. A completed scan compares with the latest completed scan of its branch (ADR 0023).',
      }),
    ),
    commit: Type.Optional(
      Type.String({
        pattern: '^[0-9a-fA-F]{40}$',
        description:
          'Extension: the commit a local-source scan was packed from (sourcehost scans: their commit).',
      }),
    ),
    pullRequest: Type.Optional(
      Type.Boolean({
        description:
          'Extension: a pull-request scan. It compares with its baseline but never changes the workspace’s drafts.',
      }),
    ),
    baselineScanId: Type.Optional(
      Type.String({
        format: 'uuid',
        description:
          'Extension: compare with this scan of the same workspace (instead of the branch’s latest).',
      }),
    ),
    baselineBranch: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        description:
          'Extension: compare with the latest completed scan of this branch (a pull request’s base).',
      }),
    ),
  },
  { additionalProperties: false, $id: 'CreateScanRequest' },
);
export type CreateScanRequest = Static<typeof CreateScanRequestSchema>;

export const IdempotencyKeyHeadersSchema = Type.Object({
  'idempotency-key': Type.String({
    minLength: 1,
    maxLength: IDEMPOTENCY_KEY_MAX_LENGTH,
    pattern: IDEMPOTENCY_KEY_PATTERN,
    description:
      'One key per intended scan, scoped to the organization; reuse it only to retry the identical request.',
  }),
});

export const AcceptedScanSchema = Type.Object(
  {
    id: UuidSchema,
    status: Type.Literal('preparing'),
    type: ScanTypeSchema,
    workspaceId: UuidSchema,
    createdAt: DateTimeSchema,
  },
  { $id: 'AcceptedScan' },
);
export type AcceptedScan = Static<typeof AcceptedScanSchema>;

/** ScanAnalysis (extension): how the engine's analysis of a completed scan went (present once it completed). */
export const ScanAnalysisSchema = Type.Object(
  {
    filesOverBudget: Type.Array(Type.String(), {
      description:
        'Files whose analysis exceeded the per-file analysis budget: only the cheap passes (lite rules, secret rules) ran on them. The findings report names each in its messages.',
    }),
  },
  {
    $id: 'ScanAnalysis',
    description: "How the engine's analysis of the scan went; present once the scan completed.",
  },
);
export type ScanAnalysis = Static<typeof ScanAnalysisSchema>;

export const ScanStatusSchema = Type.Object(
  {
    id: UuidSchema,
    status: ScanStatusValueSchema,
    type: ScanTypeSchema,
    workspaceId: UuidSchema,
    createdAt: DateTimeSchema,
    startedAt: Nullable(DateTimeSchema),
    completedAt: Nullable(DateTimeSchema),
    cancelledAt: Nullable(DateTimeSchema),
    progress: Type.Object({ filesTotal: Type.Integer(), filesDone: Type.Integer() }),
    findingsCount: Type.Integer(),
    error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
    analysis: Type.Optional(ref(ScanAnalysisSchema)),
  },
  { $id: 'ScanStatus' },
);
export type ScanStatus = Static<typeof ScanStatusSchema>;

/** CancelledScan: the scan's status after the cancel. */
export const CancelledScanSchema = Type.Object(ScanStatusSchema.properties, { $id: 'CancelledScan' });

export const ListScansQuerySchema = Type.Object(
  {
    status: Type.Optional(ScanStatusValueSchema),
    workspaceId: Type.Optional(
      Type.String({
        format: 'uuid',
        description:
          'Only the scans of this workspace; a workspace of another organization, or none, lists nothing (ADR 0003).',
      }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    next: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        description: 'The `nextValue` of the previous page, with the same filters.',
      }),
    ),
  },
  { additionalProperties: false },
);

/** ScanList (extension): the organization's scans, newest first, and the cursor of the next page. */
export const ScanListSchema = Type.Object(
  {
    scans: Type.Array(ref(ScanStatusSchema)),
    nextValue: Nullable(Type.String({ description: 'Pass as `next` for the next page; null: no more.' })),
  },
  { $id: 'ScanList' },
);

export const ScanIdParamsSchema = Type.Object({ scanId: UuidSchema });

export const ScanFindingsQuerySchema = Type.Object(
  {
    format: Type.Optional(
      Type.Union([Type.Literal('sast'), Type.Literal('sarif')], {
        description: 'sast (default): GitLab SAST report 15.x; sarif: SARIF 2.1.0.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const SastVulnerabilitySchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    description: Type.Optional(Nullable(Type.String())),
    severity: Type.String(),
    location: Type.Object({}, { additionalProperties: true }),
  },
  { $id: 'Vulnerability', additionalProperties: true },
);

/** The findings report: GitLab SAST (15.x) by default, SARIF 2.1.0 with `format=sarif`. */
export const FindingsReportSchema = Type.Union(
  [
    Type.Object(
      {
        version: Type.String(),
        scan: Type.Optional(Type.Object({}, { additionalProperties: true })),
        vulnerabilities: Type.Array(ref(SastVulnerabilitySchema)),
      },
      { additionalProperties: true },
    ),
    Type.Object(
      { version: Type.Literal('2.1.0'), runs: Type.Array(Type.Object({}, { additionalProperties: true })) },
      { additionalProperties: true },
    ),
  ],
  { $id: 'FindingsReport' },
);

/** The threat model as JSON (contracts, entry points, roles, assets, external calls, threats). */
export const ThreatModelSchema = Type.Object({}, { additionalProperties: true, $id: 'ThreatModel' });

/** The threat model as Markdown (`Accept: text/markdown`). */
export const ThreatModelMarkdownSchema = Type.String({ $id: 'ThreatModelMarkdown' });
