import { type Static, Type } from '@sinclair/typebox';
import { findingStatuses, repositoryRoles, severities } from '../../db/schema/index.ts';
import { DateTimeSchema, Nullable, ref, UuidSchema } from '../../http/schemas.ts';
import { LabelSchema } from '../labels/labels.schemas.ts';
import { AssetGroupSchema } from '../repositories/repositories.schemas.ts';

export const FindingStatusSchema = Type.Union(findingStatuses.map((s) => Type.Literal(s)));
export const SeveritySchema = Type.Union(severities.map((s) => Type.Literal(s)));

/** The repository roles (the `role` filter of the all-findings listing). */
export const REPOSITORY_ROLES = repositoryRoles;

/** Full user summary (v0 §2.2) of a finding's author or assignee. */
export const FullUserSummarySchema = Type.Object(
  {
    userId: UuidSchema,
    name: Type.String(),
    username: Type.String(),
    avatar: Nullable(Type.String()),
    isBot: Type.Boolean(),
    createdAt: DateTimeSchema,
    teamId: Nullable(UuidSchema),
    pingsLeft: Nullable(Type.Integer()),
    reputation: Type.Integer(),
    disabledAt: Nullable(DateTimeSchema),
    deletedFromRepoAt: Nullable(DateTimeSchema),
  },
  { $id: 'FullUserSummary' },
);
export type FullUserSummary = Static<typeof FullUserSummarySchema>;

export const RelatedFileSchema = Type.Object(
  {
    id: UuidSchema,
    path: Type.String(),
    lines: Nullable(Type.Object({ start: Type.Integer(), end: Type.Integer() })),
    language: Nullable(Type.String()),
    relevantContent: Nullable(Type.String()),
    /** Extension (ADR 0036): the commit the lines and content were read at, when known. */
    commit: Type.Optional(Nullable(Type.String())),
  },
  { $id: 'RelatedFile' },
);

export const FindingRefSchema = Type.Object(
  { id: UuidSchema, number: Type.Integer(), title: Type.String() },
  { $id: 'FindingRef' },
);

/**
 * Finding (v0 §2.3), every field as named, plus `status` and `severity`, which the document
 * leaves out of the payload but which listings return as extra fields (DESIGN §5).
 */
export const FindingSchema = Type.Object(
  {
    id: UuidSchema,
    number: Type.Integer(),
    attributedTo: Nullable(UuidSchema),
    title: Type.String(),
    description: Type.String(),
    relatedFiles: Type.Array(ref(RelatedFileSchema)),
    createdBy: Nullable(ref(FullUserSummarySchema)),
    createdAt: DateTimeSchema,
    lastUpdatedAt: DateTimeSchema,
    locked: Type.Boolean(),
    hasUnreadComments: Type.Boolean(),
    unreadCommentsNumber: Type.Integer(),
    repository: Type.Object({
      id: UuidSchema,
      name: Type.String(),
      allowedSeverities: Type.Array(SeveritySchema),
    }),
    company: Type.Object({ id: UuidSchema, handle: Type.String() }),
    reward: Nullable(Type.String()),
    fixedBy: Type.Array(Type.String()),
    duplicateOf: Nullable(ref(FindingRefSchema)),
    duplicates: Type.Array(ref(FindingRefSchema)),
    duplicateGroup: Nullable(
      Type.Object({ description: Nullable(Type.String()), findings: Type.Array(ref(FindingRefSchema)) }),
    ),
    category: Nullable(Type.String()),
    labels: Type.Array(ref(LabelSchema)),
    assignedTo: Nullable(ref(FullUserSummarySchema)),
    assetGroup: Nullable(ref(AssetGroupSchema)),
    lastCommentAt: Nullable(DateTimeSchema),
    safeHarborAssets: Type.Array(
      Type.Object({ id: UuidSchema, name: Type.String(), description: Type.String() }),
    ),
    note: Nullable(Type.String()),
    paymentId: Nullable(UuidSchema),
    status: FindingStatusSchema,
    severity: SeveritySchema,
  },
  { $id: 'Finding' },
);
export type Finding = Static<typeof FindingSchema>;

export const CreateFindingSchema = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 500 }),
    description: Type.String({ maxLength: 200_000 }),
    severity: SeveritySchema,
    relatedFiles: Type.Optional(
      Type.Array(
        Type.Object(
          {
            path: Type.String({ minLength: 1, maxLength: 1000 }),
            lines: Type.Optional(
              Type.Object({ start: Type.Integer({ minimum: 0 }), end: Type.Integer({ minimum: 0 }) }),
            ),
            language: Type.Optional(Type.String({ maxLength: 100 })),
            relevantContent: Type.Optional(Type.String({ maxLength: 100_000 })),
            commit: Type.Optional(
              Type.String({
                pattern: '^[0-9a-fA-F]{7,64}$',
                description: 'Extension: the commit the lines and content were read at (hex)',
              }),
            ),
          },
          { additionalProperties: false },
        ),
        { maxItems: 100 },
      ),
    ),
    assetGroupId: Type.Optional(UuidSchema),
    /** Label ids of the repository. */
    labels: Type.Optional(Type.Array(UuidSchema, { maxItems: 50, uniqueItems: true })),
  },
  { $id: 'CreateFinding', additionalProperties: false },
);
export type CreateFinding = Static<typeof CreateFindingSchema>;

/** One person of a finding's audience, as the assignee and mention pickers offer them. */
export const FindingPersonSchema = Type.Object(
  {
    userId: UuidSchema,
    username: Type.String(),
    name: Type.String(),
    /** Repository role, or `client` for a company user without one. */
    role: Nullable(Type.Union(repositoryRoles.map((r) => Type.Literal(r)))),
    isFindingAuthor: Type.Boolean(),
    /** The finding may be assigned to them. */
    assignable: Type.Boolean(),
    /** `@username` in a public comment reaches them. */
    mentionable: Type.Boolean(),
  },
  { $id: 'FindingPerson' },
);

/** The people who see a finding and whom the caller may pick. */
export const FindingPeopleSchema = Type.Object(
  { people: Type.Array(ref(FindingPersonSchema)) },
  { $id: 'FindingPeople' },
);
export type FindingPeople = Static<typeof FindingPeopleSchema>;

/** Bulk triage: the findings and what to change on each (all or nothing). */
export const BulkTriageSchema = Type.Object(
  {
    findings: Type.Array(
      Type.Object(
        {
          repositoryId: UuidSchema,
          finding: Type.String({ minLength: 1, maxLength: 64, description: 'A finding id (uuid) or number' }),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 200 },
    ),
    status: Type.Optional(FindingStatusSchema),
    /** Required when the status change needs one (see `statusChangeNeedsReason`). */
    reason: Type.Optional(Type.String({ maxLength: 5000 })),
    severity: Type.Optional(SeveritySchema),
    assignee: Type.Optional(Type.Union([Type.Null(), Type.String({ minLength: 1, maxLength: 200 })])),
    addLabels: Type.Optional(Type.Array(UuidSchema, { maxItems: 50, uniqueItems: true })),
    removeLabels: Type.Optional(Type.Array(UuidSchema, { maxItems: 50, uniqueItems: true })),
  },
  { $id: 'BulkTriageRequest', additionalProperties: false },
);
export type BulkTriage = Static<typeof BulkTriageSchema>;

/** Sort orders of the all-findings listing (v0 §4.4). */
export const FINDING_ORDERS = [
  'number_desc',
  'number_asc',
  'status_asc',
  'status_desc',
  'severity_asc',
  'severity_desc',
  'reputation_asc',
  'reputation_desc',
  'username_asc',
  'username_desc',
  'created_at_asc',
  'created_at_desc',
  'last_updated_at_asc',
  'last_updated_at_desc',
  'reward_asc',
  'reward_desc',
  'last_comment_desc',
  'last_comment_asc',
] as const;
export type FindingOrder = (typeof FINDING_ORDERS)[number];

export const FILTER_FOR_VALUES = ['client_recommended', 'with_duplicates', 'require_review'] as const;
export type FilterFor = (typeof FILTER_FOR_VALUES)[number];
