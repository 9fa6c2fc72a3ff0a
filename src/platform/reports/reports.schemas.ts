import { type Static, Type } from '@sinclair/typebox';
import { findingStatuses, severities } from '../../db/schema/index.ts';
import { DateTimeSchema, Nullable, ref, UuidSchema } from '../../http/schemas.ts';
import { NullableInput } from '../pagination/nullable-input.ts';
import { AuditorPublicProfileSchema, ShortUserSummarySchema } from '../users/users.schemas.ts';

export const RelatedFileSchema = Type.Object(
  {
    id: UuidSchema,
    path: Type.String(),
    lines: Type.Object({ start: Nullable(Type.Integer()), end: Nullable(Type.Integer()) }),
    language: Nullable(Type.String()),
    relevantContent: Nullable(Type.String()),
  },
  { $id: 'ReportRelatedFile' },
);

/** A finding as a report shows it (v0 §2.9), with its severity and status as extra fields. */
export const ReportFindingSchema = Type.Object(
  {
    id: UuidSchema,
    number: Nullable(Type.Integer()),
    attributedTo: Nullable(UuidSchema),
    title: Type.String(),
    description: Type.String(),
    createdBy: Nullable(ref(ShortUserSummarySchema)),
    createdAt: DateTimeSchema,
    fixedBy: Type.Array(Type.String()),
    relatedFiles: Type.Array(ref(RelatedFileSchema)),
    companyName: Type.String(),
    companyLogo: Nullable(Type.String()),
    severity: Type.Union(severities.map((s) => Type.Literal(s))),
    status: Type.Union(findingStatuses.map((s) => Type.Literal(s))),
  },
  { $id: 'ReportFinding' },
);
export type ReportFinding = Static<typeof ReportFindingSchema>;

/** Counts of the report's findings of one severity (the severity is an extra field). */
export const FindingStatSchema = Type.Object(
  {
    totalCount: Type.Integer(),
    fixedCount: Type.Integer(),
    severity: Type.Union(severities.map((s) => Type.Literal(s))),
  },
  { $id: 'FindingStat' },
);
export type FindingStat = Static<typeof FindingStatSchema>;

/** Report (v0 §2.9). */
export const ReportSchema = Type.Object(
  {
    id: UuidSchema,
    isPrivate: Type.Boolean(),
    projectTitle: Type.String(),
    companyHandle: Type.String(),
    clientName: Type.String(),
    clientLogo: Type.String(),
    clientWebsite: Type.String(),
    seoTitle: Type.String(),
    seoDescription: Type.String(),
    description: Type.String(),
    reportPdfLink: Type.String(),
    companyId: UuidSchema,
    engagementId: Nullable(UuidSchema),
    repositoryId: Nullable(UuidSchema),
    guildId: Nullable(UuidSchema),
    createdBy: Nullable(UuidSchema),
    engagementStartDate: Nullable(DateTimeSchema),
    engagementEndDate: Nullable(DateTimeSchema),
    createdAt: DateTimeSchema,
    publishedAt: Nullable(DateTimeSchema),
    repositoryLinks: Type.Array(Type.String()),
    commitHashes: Type.Array(Type.String()),
    typeOfProject: Type.Array(Type.String()),
    teamMembers: Type.Array(
      Type.Object({ reportId: UuidSchema, auditorPublicProfile: ref(AuditorPublicProfileSchema) }),
    ),
    findingStats: Type.Array(ref(FindingStatSchema)),
    findings: Type.Array(ref(ReportFindingSchema)),
  },
  { $id: 'Report' },
);
export type Report = Static<typeof ReportSchema>;

export const ListReportsQuerySchema = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000, default: 100 })),
    next: Type.Optional(
      Type.String({ description: 'the nextValue of the previous page, with the same q and guild' }),
    ),
    q: Type.Optional(
      Type.String({
        maxLength: 200,
        description: 'case-insensitive search in the title and the client name',
      }),
    ),
    guild: Type.Optional(Type.String({ maxLength: 100, description: 'guild name (case-insensitive)' })),
  },
  { additionalProperties: false },
);
export type ListReportsQuery = Static<typeof ListReportsQuerySchema>;

const strings = (maxItems: number, maxLength: number) =>
  Type.Array(Type.String({ minLength: 1, maxLength }), { maxItems });

const reportFields = {
  projectTitle: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
  clientName: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  clientLogo: Type.Optional(Type.String({ maxLength: 2048 })),
  clientWebsite: Type.Optional(Type.String({ maxLength: 2048 })),
  seoTitle: Type.Optional(Type.String({ maxLength: 300 })),
  seoDescription: Type.Optional(Type.String({ maxLength: 1000 })),
  description: Type.Optional(Type.String({ maxLength: 100_000 })),
  reportPdfLink: Type.Optional(Type.String({ maxLength: 2048 })),
  repositoryLinks: Type.Optional(strings(100, 2048)),
  commitHashes: Type.Optional(strings(100, 100)),
  typeOfProject: Type.Optional(strings(20, 100)),
  engagementId: Type.Optional(NullableInput(UuidSchema)),
  engagementStartDate: Type.Optional(NullableInput(DateTimeSchema)),
  engagementEndDate: Type.Optional(NullableInput(DateTimeSchema)),
  isPrivate: Type.Optional(Type.Boolean()),
  guild: Type.Optional(
    NullableInput(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description: 'guild name; platform admins may name a new one',
      }),
    ),
  ),
};

/** The findings a report lists, chosen among the repository's reportable ones (extension). */
const findingIdsField = Type.Optional(
  Type.Array(UuidSchema, {
    maxItems: 10_000,
    uniqueItems: true,
    description:
      'the findings the report lists, each a published confirmed, acknowledged or fixed finding of the repository (others → 400); unset: all of them. On an update the snapshot is taken again.',
  }),
);

export const CreateReportRequestSchema = Type.Object(
  { repositoryId: UuidSchema, findingIds: findingIdsField, ...reportFields },
  {
    $id: 'CreateReportRequest',
    additionalProperties: false,
    description:
      'From a finished repository. Title, client and engagement dates default to the repository, its company and its timeframe; the report is private (`isPrivate` true) and unpublished until published.',
  },
);
export type CreateReportRequest = Static<typeof CreateReportRequestSchema>;

export const UpdateReportRequestSchema = Type.Object(
  { findingIds: findingIdsField, ...reportFields },
  {
    $id: 'UpdateReportRequest',
    additionalProperties: false,
    minProperties: 1,
  },
);
export type UpdateReportRequest = Static<typeof UpdateReportRequestSchema>;

export const PublishReportRequestSchema = Type.Object(
  { isPrivate: Type.Optional(Type.Boolean({ description: 'false makes the published report public' })) },
  { $id: 'PublishReportRequest', additionalProperties: false },
);
