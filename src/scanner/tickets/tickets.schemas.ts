import { type Static, Type } from '@sinclair/typebox';
import { DateTimeSchema, Nullable, ref, UuidSchema } from '../../http/schemas.ts';

/** The two issue-tracker providers. */
// A plain string enum in the OpenAPI document, as the specification declares it.
export const TrackerProviderSchema = Type.Unsafe<'tracker_a' | 'tracker_b'>({
  type: 'string',
  enum: ['tracker_a', 'tracker_b'],
});
export type TrackerProviderValue = Static<typeof TrackerProviderSchema>;

/** A ticket linked to a finding: verified by a link, or created by an export. */
export const FindingTicketSchema = Type.Object(
  {
    id: UuidSchema,
    findingId: UuidSchema,
    provider: TrackerProviderSchema,
    /** The human key as the provider reported it when linked (`ENG-123`). */
    key: Type.String(),
    /** The provider's stable id (tracker_a issue UUID, tracker_b numeric id). */
    externalId: Type.String(),
    url: Type.String(),
    title: Type.String(),
    status: Nullable(Type.String()),
    linkedAt: DateTimeSchema,
    source: Type.Union([Type.Literal('linked'), Type.Literal('created')]),
  },
  { $id: 'FindingTicket' },
);
export type FindingTicket = Static<typeof FindingTicketSchema>;

/** An export of a finding to a tracker: the lock against a second ticket and its outcome. */
export const FindingIssueExportSchema = Type.Object(
  {
    id: UuidSchema,
    findingId: UuidSchema,
    provider: TrackerProviderSchema,
    state: Type.Union([
      Type.Literal('in_progress'),
      Type.Literal('created'),
      Type.Literal('failed'),
      Type.Literal('unknown'),
    ]),
    ticket: Type.Optional(ref(FindingTicketSchema)),
    createdAt: DateTimeSchema,
    updatedAt: DateTimeSchema,
    error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
  },
  { $id: 'FindingIssueExport' },
);
export type FindingIssueExport = Static<typeof FindingIssueExportSchema>;

/** Body of linkFindingTicket. */
export const LinkFindingTicketBodySchema = Type.Object(
  {
    provider: TrackerProviderSchema,
    issueRef: Type.String({ minLength: 1, maxLength: 2048 }),
  },
  { $id: 'TicketLinkRequest', additionalProperties: false },
);
export type LinkFindingTicketBody = Static<typeof LinkFindingTicketBodySchema>;

/** `{linked, ticket}`: `linked` is false when the identical link already existed. */
export const TicketLinkResultSchema = Type.Object(
  { linked: Type.Boolean(), ticket: ref(FindingTicketSchema) },
  { $id: 'TicketLinkResult' },
);
export type TicketLinkResult = Static<typeof TicketLinkResultSchema>;

/** `{created, export}`: `created` is false when the finding was already sent or linked. */
export const IssueTrackerSendResultSchema = Type.Object(
  {
    created: Type.Boolean(),
    export: ref(FindingIssueExportSchema),
  },
  { $id: 'IssueTrackerSendResult' },
);
export type IssueTrackerSendResult = Static<typeof IssueTrackerSendResultSchema>;

/** `{tickets}`. */
export const TicketListResultSchema = Type.Object(
  { tickets: Type.Array(ref(FindingTicketSchema)) },
  { $id: 'TicketListResult' },
);
export type TicketListResult = Static<typeof TicketListResultSchema>;

/** Path of the finding ticket routes. */
export const FindingParamsSchema = Type.Object({ findingId: UuidSchema });

/** Path of sendFindingToIssueTracker. */
export const FindingProviderParamsSchema = Type.Object({
  findingId: UuidSchema,
  provider: TrackerProviderSchema,
});
