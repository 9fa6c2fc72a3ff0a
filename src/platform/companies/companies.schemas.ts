import { type Static, Type } from '@sinclair/typebox';
import { Nullable, UuidSchema } from '../../http/schemas.ts';
import { NullableInput } from '../pagination/nullable-input.ts';

/** Company summary (v0 §2.1), embedded in repositories. */
export const CompanySummarySchema = Type.Object(
  {
    id: UuidSchema,
    name: Type.String(),
    handle: Type.String(),
    logo: Nullable(Type.String()),
    website: Nullable(Type.String()),
    sourcehost: Nullable(Type.String()),
    microblog: Nullable(Type.String()),
  },
  { $id: 'CompanySummary' },
);
export type CompanySummary = Static<typeof CompanySummarySchema>;

/** PATCH body of a company profile: the fields given change; null clears an optional one. */
export const UpdateCompanyRequestSchema = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    handle: Type.Optional(
      Type.String({
        pattern: '^[a-z0-9][a-z0-9-]{1,62}$',
        description: 'lower-case letters, digits and dashes',
      }),
    ),
    logo: Type.Optional(NullableInput(Type.String({ maxLength: 2048 }))),
    website: Type.Optional(NullableInput(Type.String({ maxLength: 2048 }))),
    sourcehost: Type.Optional(NullableInput(Type.String({ maxLength: 200 }))),
    microblog: Type.Optional(NullableInput(Type.String({ maxLength: 200 }))),
  },
  { $id: 'UpdateCompanyRequest', additionalProperties: false, minProperties: 1 },
);
export type UpdateCompanyRequest = Static<typeof UpdateCompanyRequestSchema>;
