import { type Static, Type } from '@sinclair/typebox';
import { DateTimeSchema, Nullable, ref, UuidSchema } from '../../http/schemas.ts';
import { NullableInput } from '../pagination/nullable-input.ts';

/** Short user summary (v0 §2.2): SSO rule creator, change-log `updatedBy`, audit-log users, report finding authors. */
export const ShortUserSummarySchema = Type.Object(
  {
    userId: UuidSchema,
    name: Type.String(),
    username: Type.String(),
    avatar: Nullable(Type.String()),
    disabledAt: Nullable(DateTimeSchema),
  },
  { $id: 'ShortUserSummary' },
);
export type ShortUserSummary = Static<typeof ShortUserSummarySchema>;

export const CompanyRoleSchema = Type.Union([Type.Literal('manager'), Type.Literal('member')]);

/** Company user (v0 §2.2), with the membership's role and dates as extra fields. */
export const CompanyUserSchema = Type.Object(
  {
    userId: UuidSchema,
    name: Type.String(),
    username: Type.String(),
    email: Nullable(Type.String()),
    isActivated: Type.Boolean({ description: 'False until the user has joined a company.' }),
    createdAt: DateTimeSchema,
    isBot: Type.Boolean(),
    companyId: UuidSchema,
    avatar: Nullable(Type.String()),
    isGeneratedAvatar: Type.Boolean(),
    chat_a: Nullable(Type.String()),
    chat_b: Nullable(Type.String()),
    timezone: Nullable(Type.String()),
    disabledAt: Nullable(DateTimeSchema),
    companyRole: CompanyRoleSchema,
    invitedAt: DateTimeSchema,
    joinedAt: Nullable(DateTimeSchema),
    deletedAt: Nullable(DateTimeSchema),
  },
  { $id: 'CompanyUser' },
);
export type CompanyUser = Static<typeof CompanyUserSchema>;

export const BadgeSchema = Type.Object(
  {
    id: UuidSchema,
    name: Type.String(),
    image: Type.String(),
    description: Type.String(),
    issuedAt: DateTimeSchema,
  },
  { $id: 'Badge' },
);

/** Auditor public profile (v0 §2.2). */
export const AuditorPublicProfileSchema = Type.Object(
  {
    id: UuidSchema,
    name: Type.String(),
    username: Type.String(),
    avatar: Nullable(Type.String()),
    isBot: Type.Boolean(),
    verifiedProfile: Type.Boolean(),
    isNdaSigned: Type.Boolean(),
    reputation: Type.Integer(),
    skills: Type.Array(Type.String()),
    badges: Type.Array(ref(BadgeSchema)),
    createdAt: DateTimeSchema,
    sourcehost: Nullable(Type.String()),
    microblog: Nullable(Type.String()),
    tagline: Nullable(Type.String()),
    bio: Nullable(Type.String()),
    website: Nullable(Type.String()),
    guildAffiliation: Nullable(UuidSchema),
  },
  { $id: 'AuditorPublicProfile' },
);
export type AuditorPublicProfile = Static<typeof AuditorPublicProfileSchema>;

const _UsernameSchema = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{1,38}$' });
const shortText = (maxLength: number) => NullableInput(Type.String({ maxLength }));

export const ListCompanyUsersQuerySchema = Type.Object(
  {
    include_all: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'true also lists deleted and disabled users (people invited but not joined are invitations: listCompanyInvitations)',
      }),
    ),
    q: Type.Optional(
      Type.String({ maxLength: 200, description: 'case-insensitive search in name and username' }),
    ),
  },
  { additionalProperties: false },
);
export type ListCompanyUsersQuery = Static<typeof ListCompanyUsersQuerySchema>;

export const ChangeCompanyRoleRequestSchema = Type.Object(
  { role: CompanyRoleSchema },
  { $id: 'ChangeCompanyRoleRequest', additionalProperties: false },
);

export const UpdateProfileRequestSchema = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    avatar: Type.Optional(shortText(2048)),
    email: Type.Optional(NullableInput(Type.String({ format: 'email', maxLength: 320 }))),
    tagline: Type.Optional(shortText(200)),
    bio: Type.Optional(shortText(5000)),
    website: Type.Optional(shortText(2048)),
    sourcehost: Type.Optional(shortText(200)),
    microblog: Type.Optional(shortText(200)),
    chat_a: Type.Optional(shortText(200)),
    chat_b: Type.Optional(shortText(200)),
    timezone: Type.Optional(shortText(100)),
    skills: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 50 })),
    verifiedProfile: Type.Optional(Type.Boolean({ description: 'platform admins only' })),
    isNdaSigned: Type.Optional(Type.Boolean({ description: 'platform admins only' })),
    reputation: Type.Optional(Type.Integer({ minimum: 0, description: 'platform admins only' })),
    isBot: Type.Optional(Type.Boolean({ description: 'platform admins only' })),
    guild: Type.Optional(
      NullableInput(
        Type.String({ minLength: 1, maxLength: 100, description: 'guild name; platform admins only' }),
      ),
    ),
  },
  { $id: 'UpdateProfileRequest', additionalProperties: false },
);
export type UpdateProfileRequest = Static<typeof UpdateProfileRequestSchema>;

export const AwardBadgeRequestSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    image: Type.Optional(Type.String({ maxLength: 2048 })),
    description: Type.Optional(Type.String({ maxLength: 1000 })),
    issuedAt: Type.Optional(DateTimeSchema),
  },
  { $id: 'AwardBadgeRequest', additionalProperties: false },
);
export type AwardBadgeRequest = Static<typeof AwardBadgeRequestSchema>;
