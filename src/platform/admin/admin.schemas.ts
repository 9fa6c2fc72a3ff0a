import { type Static, Type } from '@sinclair/typebox';
import { PLATFORM_PERMISSIONS } from '../../auth/actor.ts';
import { DateTimeSchema, Nullable, UuidSchema } from '../../http/schemas.ts';
import { CompanySummarySchema } from '../companies/companies.schemas.ts';

export const CreateCompanyRequestSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    handle: Type.String({
      pattern: '^[a-z0-9][a-z0-9-]{1,62}$',
      description: 'lower-case letters, digits and dashes',
    }),
    logo: Type.Optional(Type.String({ maxLength: 2048 })),
    website: Type.Optional(Type.String({ maxLength: 2048 })),
    sourcehost: Type.Optional(Type.String({ maxLength: 200 })),
    microblog: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { $id: 'CreateCompanyRequest', additionalProperties: false },
);
export type CreateCompanyRequest = Static<typeof CreateCompanyRequestSchema>;

/** A company as the platform admin sees it: its summary and when it was created. */
export const CompanySchema = Type.Composite(
  [CompanySummarySchema, Type.Object({ createdAt: DateTimeSchema })],
  {
    $id: 'Company',
  },
);

export const CreateUserRequestSchema = Type.Object(
  {
    username: Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{1,38}$' }),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    email: Type.Optional(Type.String({ format: 'email', maxLength: 320 })),
    companyId: Type.Optional(UuidSchema),
    companyRole: Type.Optional(Type.Union([Type.Literal('manager'), Type.Literal('member')])),
    permissions: Type.Optional(Type.Array(Type.Union(PLATFORM_PERMISSIONS.map((p) => Type.Literal(p))))),
  },
  { $id: 'CreateUserRequest', additionalProperties: false },
);

export const AdminUserSchema = Type.Object(
  {
    id: UuidSchema,
    username: Type.String(),
    name: Type.String(),
    email: Nullable(Type.String()),
    companyId: Nullable(UuidSchema),
    companyRole: Nullable(Type.String()),
    createdAt: DateTimeSchema,
  },
  { $id: 'AdminUser' },
);

export const CreateTokenRequestSchema = Type.Object(
  {
    expiresAt: Type.Optional(DateTimeSchema),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  },
  { $id: 'CreateTokenRequest', additionalProperties: false },
);

export const CreatedTokenSchema = Type.Object(
  {
    id: UuidSchema,
    token: Type.String({ description: 'Shown once; only its hash is stored.' }),
    prefix: Type.String(),
    expiresAt: DateTimeSchema,
  },
  { $id: 'CreatedToken' },
);

export const GrantCreditsRequestSchema = Type.Object(
  {
    amount: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
    note: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { $id: 'GrantCreditsRequest', additionalProperties: false },
);
