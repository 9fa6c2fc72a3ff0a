import { Type } from '@sinclair/typebox';
import { DateTimeSchema } from '../../http/schemas.ts';

const ScanTypeAvailabilitySchema = Type.Object({
  available: Type.Boolean(),
  cost: Type.Integer({ minimum: 0 }),
  reason: Type.Optional(Type.String()),
});

/** CreditBalances: a point-in-time snapshot of the organization's credits. */
export const CreditBalancesSchema = Type.Object(
  {
    purchased: Type.Integer(),
    used: Type.Integer(),
    reserved: Type.Integer(),
    remaining: Type.Integer(),
    asOf: DateTimeSchema,
    scanTypes: Type.Object({
      lite: ScanTypeAvailabilitySchema,
      standard: ScanTypeAvailabilitySchema,
      audit: ScanTypeAvailabilitySchema,
    }),
  },
  { $id: 'CreditBalances' },
);
