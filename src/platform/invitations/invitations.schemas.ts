import { type Static, Type } from '@sinclair/typebox';
import { invitationStates } from '../../db/schema/index.ts';
import { DateTimeSchema, Nullable, ref, UuidSchema } from '../../http/schemas.ts';
import { CompanyRoleSchema, ShortUserSummarySchema } from '../users/users.schemas.ts';

export const InvitationStateSchema = Type.Union(
  invitationStates.map((s) => Type.Literal(s)),
  { description: '`expired`: still pending past `expiresAt`' },
);

/**
 * An invitation to join a company (extension). It carries only what the inviting manager
 * supplied (`username`, `email`, `name`) and never anything about a platform user: the invitee
 * appears among the company users, with their own profile, once they accept.
 */
export const CompanyInvitationSchema = Type.Object(
  {
    id: UuidSchema,
    company: Type.Object({ id: UuidSchema, name: Type.String(), handle: Type.String() }),
    role: CompanyRoleSchema,
    username: Nullable(Type.String({ description: 'as the inviter gave it' })),
    email: Nullable(Type.String({ description: 'as the inviter gave it' })),
    name: Nullable(Type.String({ description: 'as the inviter gave it' })),
    state: InvitationStateSchema,
    invitedBy: Nullable(ref(ShortUserSummarySchema)),
    createdAt: DateTimeSchema,
    expiresAt: DateTimeSchema,
    respondedAt: Nullable(DateTimeSchema),
  },
  { $id: 'CompanyInvitation' },
);
export type CompanyInvitation = Static<typeof CompanyInvitationSchema>;

const UsernameSchema = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{1,38}$' });

export const InviteUserRequestSchema = Type.Object(
  {
    username: Type.Optional(UsernameSchema),
    email: Type.Optional(Type.String({ format: 'email', maxLength: 320 })),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    role: Type.Optional(CompanyRoleSchema),
  },
  {
    $id: 'InviteUserRequest',
    additionalProperties: false,
    description:
      'A username or an e-mail address (or both). With a username, only the user of that name may accept; with an e-mail address alone, whoever holds the one-time secret the invitation e-mail carries. No user is created or looked up for the answer.',
  },
);
export type InviteUserRequest = Static<typeof InviteUserRequestSchema>;

export const RespondToInvitationRequestSchema = Type.Object(
  {
    secret: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description:
          'The one-time secret of the invitation e-mail (needed for an invitation by e-mail alone)',
      }),
    ),
  },
  { $id: 'RespondToInvitationRequest', additionalProperties: false },
);
export type RespondToInvitationRequest = Static<typeof RespondToInvitationRequestSchema>;

export const ListInvitationsQuerySchema = Type.Object(
  {
    state: Type.Optional(InvitationStateSchema),
  },
  { additionalProperties: false },
);
export type ListInvitationsQuery = Static<typeof ListInvitationsQuerySchema>;

export const CompanyInvitationListSchema = Type.Object(
  { invitations: Type.Array(ref(CompanyInvitationSchema)) },
  { $id: 'CompanyInvitationList' },
);
