import { type Static, Type } from '@sinclair/typebox';
import { auditActions } from '../../db/schema/index.ts';
import { DateTimeSchema, Nullable, ref, UuidSchema } from '../../http/schemas.ts';
import { ShortUserSummarySchema } from '../users/users.schemas.ts';

export const AuditActionSchema = Type.Union(auditActions.map((a) => Type.Literal(a)));

/** Audit-log entry (v0 §2.8), with the action and its details as extra fields. */
export const AuditLogEntrySchema = Type.Object(
  {
    type: Type.Literal('company_audit_log'),
    id: UuidSchema,
    target: Nullable(ref(ShortUserSummarySchema)),
    createdBy: Nullable(ref(ShortUserSummarySchema)),
    createdAt: DateTimeSchema,
    sourcehost_account_name: Nullable(Type.String()),
    action: AuditActionSchema,
    details: Type.Record(Type.String(), Type.Unknown()),
  },
  { $id: 'AuditLogEntry' },
);
export type AuditLogEntry = Static<typeof AuditLogEntrySchema>;

const userRefs = (description: string) =>
  Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 4000 }), {
      description: `${description}: user ids (uuid) or usernames; repeat the parameter or separate values with commas`,
    }),
  );

export const AuditLogQuerySchema = Type.Object(
  {
    target_users: userRefs('only entries whose target is one of these users'),
    performing_users: userRefs('only entries in which one of these users acted'),
    actions: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 1000 }), {
        description: `only these actions; repeated or comma-separated values of: ${auditActions.join(', ')}`,
      }),
    ),
    since: Type.Optional(
      Type.String({ format: 'date-time', description: 'entries created at or after this time' }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, default: 5 })),
    order_by: Type.Optional(
      Type.Union([Type.Literal('created_at_asc'), Type.Literal('created_at_desc')], {
        default: 'created_at_desc',
      }),
    ),
    next: Type.Optional(
      Type.String({ description: 'the nextValue of the previous page, with the same filters' }),
    ),
  },
  { additionalProperties: false },
);
export type AuditLogQuery = Static<typeof AuditLogQuerySchema>;

export const AuditLogPageSchema = Type.Object(
  {
    items: Type.Array(ref(AuditLogEntrySchema)),
    nextValue: Nullable(Type.String()),
  },
  { $id: 'AuditLogPage' },
);
