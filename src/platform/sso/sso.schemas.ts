import { type Static, Type } from '@sinclair/typebox';
import { DateTimeSchema, Nullable, ref, UuidSchema } from '../../http/schemas.ts';
import { ShortUserSummarySchema } from '../users/users.schemas.ts';

/** SSO enforcement rule (v0 §2.6). */
export const SsoRuleSchema = Type.Object(
  {
    id: UuidSchema,
    companyId: UuidSchema,
    domain: Type.String(),
    createdAt: DateTimeSchema,
    createdBy: Nullable(ref(ShortUserSummarySchema)),
  },
  { $id: 'SsoEnforcementRule' },
);
export type SsoRule = Static<typeof SsoRuleSchema>;

export const CreateSsoRuleRequestSchema = Type.Object(
  {
    domain: Type.String({
      minLength: 3,
      maxLength: 253,
      pattern: '^([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]{2,63}$',
      description: 'an email domain such as example.com; unique across the platform, case-insensitively',
    }),
  },
  { $id: 'CreateSsoRuleRequest', additionalProperties: false },
);
