import { type Static, Type } from '@sinclair/typebox';
import { repositoryRoles, severities } from '../../db/schema/index.ts';
import { DateTimeSchema, Nullable, ref, UuidSchema } from '../../http/schemas.ts';
import { CompanySummarySchema } from '../companies/companies.schemas.ts';
import { NullableInput } from '../pagination/nullable-input.ts';
import { ShortUserSummarySchema } from '../users/users.schemas.ts';

export const SeveritySchema = Type.Union(severities.map((s) => Type.Literal(s)));
export const RepositoryRoleSchema = Type.Union(repositoryRoles.map((r) => Type.Literal(r)));

/** A money amount as a decimal string (no exponent, no sign). */
export const MoneySchema = Type.String({
  pattern: '^[0-9]{1,18}(\\.[0-9]{1,18})?$',
  examples: ['1000', '12.50'],
});

export const AssetSchema = Type.Object(
  {
    id: UuidSchema,
    name: Type.String(),
    description: Type.String(),
    reference: Type.String(),
  },
  { $id: 'Asset' },
);

export const RewardRangeSchema = Type.Object(
  { minReward: Type.String(), maxReward: Type.String() },
  { $id: 'RewardRange' },
);

export const AssetGroupSchema = Type.Object(
  {
    id: UuidSchema,
    name: Type.String(),
    description: Type.String(),
    outOfScope: Type.Boolean(),
    rewards: Type.Array(ref(RewardRangeSchema)),
    assets: Type.Array(ref(AssetSchema)),
    subGroups: Type.Array(
      Type.Object({
        id: UuidSchema,
        name: Type.String(),
        description: Type.String(),
        assets: Type.Array(ref(AssetSchema)),
      }),
    ),
  },
  { $id: 'AssetGroup' },
);
export type AssetGroup = Static<typeof AssetGroupSchema>;

export const SafeHarborSchema = Type.Object(
  {
    id: UuidSchema,
    description: Type.String(),
    reward: Type.String(),
    cap: Type.String(),
    returnAddresses: Type.Array(Type.Object({ id: UuidSchema, address: Type.String() })),
    assets: Type.Array(Type.Object({ id: UuidSchema, name: Type.String(), description: Type.String() })),
  },
  { $id: 'SafeHarbor' },
);
export type SafeHarbor = Static<typeof SafeHarborSchema>;

/** Repository (v0 §2.1), with `isPublic`, `showAllFindings`, `finishedAt` and the caller's `role` as extra fields. */
export const RepositorySchema = Type.Object(
  {
    id: UuidSchema,
    currencyCode: Type.String(),
    kycRequired: Type.Boolean(),
    totalFindings: Type.Integer({ description: 'published findings of the repository' }),
    createdAt: DateTimeSchema,
    name: Type.String(),
    url: Type.String(),
    company: ref(CompanySummarySchema),
    timeframe: Type.Object({ start: Nullable(DateTimeSchema), end: Nullable(DateTimeSchema) }),
    totalRewardPot: Type.String(),
    submissionFee: Type.String(),
    assetGroups: Type.Array(ref(AssetGroupSchema)),
    safeHarbor: Nullable(ref(SafeHarborSchema)),
    instructions: Type.String(),
    requiredCtfAddress: Type.String(),
    reward: Type.String({
      description: "the caller's rewards in this repository: sum over their published findings",
    }),
    rank: Type.Integer({
      description:
        "the caller's rank among the repository's reviewers by accepted findings (confirmed, acknowledged, fixed), then reputation; equal scores share a rank; 0 when the caller is not a reviewer",
    }),
    rankTotal: Type.Integer({ description: 'number of ranked reviewers' }),
    allowedSeverities: Type.Array(SeveritySchema),
    isPublic: Type.Boolean({ description: 'any user may join (joinable)' }),
    showAllFindings: Type.Boolean(),
    finishedAt: Nullable(DateTimeSchema),
    role: Nullable(RepositoryRoleSchema),
  },
  { $id: 'Repository' },
);
export type Repository = Static<typeof RepositorySchema>;

const text = (maxLength: number) => Type.String({ maxLength });

const AssetInputSchema = Type.Object(
  {
    id: Type.Optional(UuidSchema),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(text(5000)),
    reference: Type.Optional(text(2048)),
  },
  { additionalProperties: false },
);

const SubGroupInputSchema = Type.Object(
  {
    id: Type.Optional(UuidSchema),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(text(5000)),
    assets: Type.Optional(Type.Array(AssetInputSchema, { maxItems: 500 })),
  },
  { additionalProperties: false },
);

export const AssetGroupInputSchema = Type.Object(
  {
    id: Type.Optional(UuidSchema),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(text(5000)),
    outOfScope: Type.Optional(Type.Boolean()),
    rewards: Type.Optional(
      Type.Array(
        Type.Object({ minReward: MoneySchema, maxReward: MoneySchema }, { additionalProperties: false }),
        {
          maxItems: 20,
        },
      ),
    ),
    assets: Type.Optional(Type.Array(AssetInputSchema, { maxItems: 500 })),
    subGroups: Type.Optional(Type.Array(SubGroupInputSchema, { maxItems: 100 })),
  },
  {
    additionalProperties: false,
    description:
      'With `id`: that existing group (or sub-group, or asset) is kept and changed; without: created.',
  },
);
export type AssetGroupInput = Static<typeof AssetGroupInputSchema>;

export const SafeHarborInputSchema = Type.Object(
  {
    description: Type.Optional(text(10000)),
    reward: Type.Optional(MoneySchema),
    cap: Type.Optional(MoneySchema),
    returnAddresses: Type.Optional(
      Type.Array(
        Type.Object(
          { id: Type.Optional(UuidSchema), address: Type.String({ minLength: 1, maxLength: 200 }) },
          { additionalProperties: false },
        ),
        { maxItems: 50 },
      ),
    ),
    assets: Type.Optional(
      Type.Array(
        Type.Object(
          {
            id: Type.Optional(UuidSchema),
            name: Type.String({ minLength: 1, maxLength: 200 }),
            description: Type.Optional(text(5000)),
          },
          { additionalProperties: false },
        ),
        { maxItems: 500 },
      ),
    ),
  },
  { additionalProperties: false },
);
export type SafeHarborInput = Static<typeof SafeHarborInputSchema>;

const repositoryFields = {
  url: Type.Optional(text(2048)),
  currencyCode: Type.Optional(Type.String({ pattern: '^[A-Z0-9]{2,10}$' })),
  kycRequired: Type.Optional(Type.Boolean()),
  timeframe: Type.Optional(
    Type.Object(
      {
        start: Type.Optional(NullableInput(DateTimeSchema)),
        end: Type.Optional(NullableInput(DateTimeSchema)),
      },
      { additionalProperties: false },
    ),
  ),
  totalRewardPot: Type.Optional(MoneySchema),
  submissionFee: Type.Optional(MoneySchema),
  instructions: Type.Optional(text(100_000)),
  requiredCtfAddress: Type.Optional(text(200)),
  allowedSeverities: Type.Optional(Type.Array(SeveritySchema, { minItems: 1, uniqueItems: true })),
  isPublic: Type.Optional(Type.Boolean()),
  showAllFindings: Type.Optional(Type.Boolean()),
  assetGroups: Type.Optional(Type.Array(AssetGroupInputSchema, { maxItems: 100 })),
  safeHarbor: Type.Optional(NullableInput(SafeHarborInputSchema)),
};

export const CreateRepositoryRequestSchema = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 200 }), ...repositoryFields },
  { $id: 'CreateRepositoryRequest', additionalProperties: false },
);
export type CreateRepositoryRequest = Static<typeof CreateRepositoryRequestSchema>;

export const UpdateRepositoryRequestSchema = Type.Object(
  { name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), ...repositoryFields },
  {
    $id: 'UpdateRepositoryRequest',
    additionalProperties: false,
    minProperties: 1,
    description:
      '`assetGroups` replaces the list: groups, sub-groups and assets given with their `id` are kept and changed, those without are created, the others removed. `safeHarbor: null` removes it.',
  },
);
export type UpdateRepositoryRequest = Static<typeof UpdateRepositoryRequestSchema>;

/** Repository change-log event (v0 §2.7): old and new values of the changed fields only. */
export const RepositoryEventSchema = Type.Object(
  {
    id: UuidSchema,
    oldValue: Type.Record(Type.String(), Type.Unknown()),
    newValue: Type.Record(Type.String(), Type.Unknown()),
    updatedBy: Nullable(ref(ShortUserSummarySchema)),
    updatedAt: DateTimeSchema,
  },
  { $id: 'RepositoryChangeLogEvent' },
);
export type RepositoryEvent = Static<typeof RepositoryEventSchema>;

export const PutMemberRequestSchema = Type.Object(
  {
    role: RepositoryRoleSchema,
    teamId: Type.Optional(NullableInput(UuidSchema)),
    pingsLeft: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
  },
  { $id: 'PutMemberRequest', additionalProperties: false },
);
export type PutMemberRequest = Static<typeof PutMemberRequestSchema>;

export const RepositoryMemberSchema = Type.Object(
  {
    repositoryId: UuidSchema,
    user: ref(ShortUserSummarySchema),
    role: RepositoryRoleSchema,
    teamId: Nullable(UuidSchema),
    pingsLeft: Type.Integer(),
    joinedAt: DateTimeSchema,
    deletedAt: Nullable(DateTimeSchema),
  },
  { $id: 'RepositoryMember' },
);
export type RepositoryMember = Static<typeof RepositoryMemberSchema>;
