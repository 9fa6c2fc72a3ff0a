import { type Static, Type } from '@sinclair/typebox';
import { baselineStates, dismissalReasons, draftTriageStates, severities } from '../../db/schema/index.ts';
import { DateTimeSchema, Nullable, ref, UuidSchema } from '../../http/schemas.ts';

const literals = <T extends string>(values: readonly T[], options: { description?: string } = {}) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  );

export const DraftStateSchema = literals(draftTriageStates, {
  description:
    'open: to triage; dismissed: a person set it aside (it stays dismissed in later scans); published: filed as a repository finding; fixed: not reproduced by a later completed scan of its branch; reopened: found again after fixed.',
});
export type DraftState = Static<typeof DraftStateSchema>;

export const DismissalReasonSchema = literals(dismissalReasons);
export type DismissalReason = Static<typeof DismissalReasonSchema>;

export const DraftSeveritySchema = literals(severities);

export const BaselineStateSchema = literals([...baselineStates, 'fixed'] as const, {
  description:
    "How the draft compares with the scan's baseline: new (not in the baseline), unchanged, reopened (fixed before, found again) or fixed (in the baseline, not found by this scan).",
});
export type BaselineState = Static<typeof BaselineStateSchema>;

/** Who did something to a draft. */
export const DraftActorSchema = Type.Object(
  { userId: Nullable(UuidSchema), username: Nullable(Type.String()) },
  { $id: 'DraftActor', description: 'A person (null fields: a service key or a deleted user).' },
);

/** Draft (extension): a finding a scan proposed, with its triage. */
export const DraftSchema = Type.Object(
  {
    id: UuidSchema,
    workspaceId: UuidSchema,
    fingerprint: Type.String({
      description:
        'Stable identity across scans: rule, file, enclosing contract and function, normalised snippet and occurrence (SARIF partialFingerprints vigilFingerprint/v1).',
    }),
    ruleId: Type.String(),
    identifiers: Type.Array(Type.String(), {
      description: 'Registry ids of the rule, named with their registry: `SWC-107`, `CWE-841`.',
    }),
    title: Type.String(),
    description: Type.String(),
    severity: DraftSeveritySchema,
    confidence: Nullable(Type.String()),
    category: Nullable(Type.String()),
    location: Type.Object({ file: Type.String(), startLine: Type.Integer(), endLine: Type.Integer() }),
    snippet: Nullable(Type.String()),
    contract: Nullable(Type.String()),
    function: Nullable(Type.String()),
    state: DraftStateSchema,
    dismissal: Nullable(
      Type.Object({
        reason: DismissalReasonSchema,
        comment: Nullable(Type.String()),
        by: ref(DraftActorSchema),
        at: DateTimeSchema,
      }),
    ),
    publication: Nullable(
      Type.Object({
        findingId: UuidSchema,
        repositoryId: Nullable(UuidSchema),
        number: Nullable(Type.Integer()),
        by: ref(DraftActorSchema),
        at: DateTimeSchema,
      }),
    ),
    baselineState: Type.Optional(
      Type.Union([BaselineStateSchema, Type.Null()], {
        description: 'In a scan listing: how the draft compares with the scan’s baseline.',
      }),
    ),
    firstSeenAt: DateTimeSchema,
  },
  { $id: 'Draft' },
);
export type Draft = Static<typeof DraftSchema>;

/** DraftPage (extension): one page of drafts and the cursor of the next. */
export const DraftPageSchema = Type.Object(
  {
    items: Type.Array(ref(DraftSchema)),
    nextValue: Nullable(Type.String({ description: 'Pass as `next` for the next page; null: no more.' })),
  },
  { $id: 'DraftPage' },
);
export type DraftPage = Static<typeof DraftPageSchema>;

const commonFilters = {
  state: Type.Optional(DraftStateSchema),
  severity: Type.Optional(DraftSeveritySchema),
  rule: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'A rule id.' })),
  path: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 1024,
      description: 'A file path, or a folder (ending in /) whose files are meant.',
    }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
  next: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
};

export const WorkspaceDraftsQuerySchema = Type.Object(
  {
    ...commonFilters,
    newInScan: Type.Optional(
      Type.String({ format: 'uuid', description: 'Only drafts new (or reopened) in this scan.' }),
    ),
  },
  { additionalProperties: false },
);
export type WorkspaceDraftsQuery = Static<typeof WorkspaceDraftsQuerySchema>;

export const ScanDraftsQuerySchema = Type.Object(
  { ...commonFilters, baselineState: Type.Optional(BaselineStateSchema) },
  { additionalProperties: false },
);
export type ScanDraftsQuery = Static<typeof ScanDraftsQuerySchema>;

export const WorkspaceIdParamsSchema = Type.Object({ workspaceId: UuidSchema });

/** TriageDraftsRequest (extension): dismiss (with a reason) or reopen one or many drafts. */
export const TriageDraftsRequestSchema = Type.Object(
  {
    draftIds: Type.Array(UuidSchema, { minItems: 1, maxItems: 100, uniqueItems: true }),
    action: Type.Union([Type.Literal('dismiss'), Type.Literal('reopen')]),
    reason: Type.Optional(DismissalReasonSchema),
    comment: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  {
    $id: 'TriageDraftsRequest',
    additionalProperties: false,
    description: '`dismiss` needs a `reason`; `reopen` takes a dismissed draft back to open.',
  },
);
export type TriageDraftsRequest = Static<typeof TriageDraftsRequestSchema>;

/** DraftList (extension): the drafts an operation acted on, as they now are. */
export const DraftListSchema = Type.Object({ items: Type.Array(ref(DraftSchema)) }, { $id: 'DraftList' });

/** PublishDraftsRequest (extension): file one or many drafts as findings of a repository. */
export const PublishDraftsRequestSchema = Type.Object(
  {
    repositoryId: UuidSchema,
    drafts: Type.Array(
      Type.Object(
        {
          draftId: UuidSchema,
          severity: Type.Optional(DraftSeveritySchema),
          title: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
          description: Type.Optional(Type.String({ maxLength: 50_000 })),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 50 },
    ),
  },
  {
    $id: 'PublishDraftsRequest',
    additionalProperties: false,
    description:
      "The repository must be one of the workspace's company. Severity (default: the draft's), title and description may be chosen per draft. A draft published before answers its finding again (created: false).",
  },
);
export type PublishDraftsRequest = Static<typeof PublishDraftsRequestSchema>;

export const PublishedDraftSchema = Type.Object(
  {
    draftId: UuidSchema,
    findingId: UuidSchema,
    repositoryId: UuidSchema,
    number: Type.Integer(),
    created: Type.Boolean({ description: 'false: the draft had been published before (nothing created).' }),
  },
  { $id: 'PublishedDraft' },
);
export type PublishedDraft = Static<typeof PublishedDraftSchema>;

export const PublishedDraftListSchema = Type.Object(
  { items: Type.Array(ref(PublishedDraftSchema)) },
  { $id: 'PublishedDraftList' },
);

const bySeverity = Type.Object(
  Object.fromEntries(severities.map((s) => [s, Type.Integer()])) as Record<
    (typeof severities)[number],
    ReturnType<typeof Type.Integer>
  >,
);

/** ScanComparison (extension): a completed scan against its baseline. */
export const ScanComparisonSchema = Type.Object(
  {
    scanId: UuidSchema,
    baselineScanId: Type.Union([UuidSchema, Type.Null()], {
      description: 'null: nothing to compare with (every draft is new).',
    }),
    branch: Nullable(Type.String()),
    commit: Nullable(Type.String()),
    pullRequest: Type.Boolean(),
    new: Type.Integer(),
    unchanged: Type.Integer(),
    fixed: Type.Integer(),
    reopened: Type.Integer(),
    dismissed: Type.Integer({ description: 'Drafts of the scan that are dismissed.' }),
    newBySeverity: Type.Object(bySeverity.properties, {
      description: 'New and reopened drafts that are not dismissed, by severity.',
    }),
    openBySeverity: Type.Object(bySeverity.properties, {
      description: 'Every draft of the scan that is not dismissed, by severity.',
    }),
    summary: Type.String({
      description: 'As the commit status reads, for example "2 new (1 High) · 3 fixed".',
    }),
  },
  { $id: 'ScanComparison' },
);
export type ScanComparison = Static<typeof ScanComparisonSchema>;

/** A published finding's scan timeline entry. */
export const FindingScanEventSchema = Type.Object(
  {
    kind: Type.Union([
      Type.Literal('published'),
      Type.Literal('present'),
      Type.Literal('not_reproduced'),
      Type.Literal('marked_fixed'),
    ]),
    scanId: UuidSchema,
    commit: Nullable(Type.String()),
    at: DateTimeSchema,
    text: Type.String({ description: 'For example "Still present in scan … at commit …".' }),
  },
  { $id: 'FindingScanEvent' },
);

/** FindingScanTimeline (extension): what scans said of a published finding, oldest first. */
export const FindingScanTimelineSchema = Type.Object(
  {
    draftId: Nullable(UuidSchema),
    sourceScanId: Nullable(UuidSchema),
    events: Type.Array(ref(FindingScanEventSchema)),
  },
  { $id: 'FindingScanTimeline' },
);
export type FindingScanTimeline = Static<typeof FindingScanTimelineSchema>;

/** DraftSettings (extension): who triages a company's drafts, and automatic `fixed`. */
export const DraftSettingsSchema = Type.Object(
  {
    triagerUserIds: Type.Array(UuidSchema, {
      maxItems: 500,
      uniqueItems: true,
      description: 'Members (besides managers) allowed to triage and publish drafts.',
    }),
    autoMarkFixed: Type.Boolean({
      description:
        'Mark a published finding fixed when a later scan of its branch no longer reproduces it (default false: only people change its status).',
    }),
  },
  { $id: 'DraftSettings', additionalProperties: false },
);
export type DraftSettings = Static<typeof DraftSettingsSchema>;
