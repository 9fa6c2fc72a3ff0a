import { type Static, Type } from '@sinclair/typebox';
import { auditActions } from '../../db/schema/index.ts';
import { DateTimeSchema, Nullable, ref, UuidSchema } from '../../http/schemas.ts';
import { ShortUserSummarySchema } from '../users/users.schemas.ts';

export const AuditActionSchema = Type.Union(
  auditActions.map((a) => Type.Literal(a)),
  {
    description:
      'The first seven are the contract’s (v0 §4.9); the others are extensions (ADR 0017): invitations, service keys, SSO rules, integrations and source-host repository links, the notification webhook, credit grants, repository membership and console sign-ins.',
  },
);

/** Audit-log entry (v0 §2.8), with the action and its details as extra fields. */
export const AuditLogEntrySchema = Type.Object(
  {
    type: Type.Literal('company_audit_log'),
    id: UuidSchema,
    target: Type.Union([ref(ShortUserSummarySchema), Type.Null()], {
      description:
        'The user the change concerns; null when it concerns no user (service keys, SSO rules, integrations, the notification webhook, credits, invitations nobody accepted): `details` then says what changed.',
    }),
    createdBy: Type.Union([ref(ShortUserSummarySchema), Type.Null()], {
      description:
        'The acting user; null when unknown or when naming them would reveal someone (a declined invitation).',
    }),
    createdAt: DateTimeSchema,
    sourcehost_account_name: Nullable(Type.String()),
    action: AuditActionSchema,
    details: Type.Record(Type.String(), Type.Unknown(), {
      description:
        'Extension: what changed, never a secret. user_invited, invitation_revoked, invitation_declined: invitationId, username, email, role (as the inviter gave them); user_auto_joined: via (invitation | sso_domain), role; company_role_changed: from, to; service_key_*: keyId, name, prefix, scopes, expiresAt; sso_rule_*: ruleId, domain; integration_* and sourcehost_integration_*: integrationId, provider, site; sourcehost_repository_*: repository, workspaceId, prefix (linked: watchBranches, scanType); notification_webhook_set: destination (the origin only); credits_granted: amount, note; repository_member_*: repositoryId, role, from (a change), via (join); session_signed_in: via.',
    }),
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
