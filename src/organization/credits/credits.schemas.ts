import { Type } from '@sinclair/typebox';
import { DateTimeSchema, ref } from '../../http/schemas.ts';

export const ScanTypeAvailabilitySchema = Type.Object(
  {
    available: Type.Boolean(),
    cost: Type.Integer({ minimum: 0 }),
    reason: Type.Optional(Type.String()),
  },
  { $id: 'ScanTypeAvailability' },
);

/** CreditBalances: a point-in-time snapshot of the organization's credits. */
export const CreditBalancesSchema = Type.Object(
  {
    purchased: Type.Integer(),
    used: Type.Integer(),
    reserved: Type.Integer(),
    remaining: Type.Integer(),
    asOf: DateTimeSchema,
    scanTypes: Type.Object({
      lite: ref(ScanTypeAvailabilitySchema),
      standard: ref(ScanTypeAvailabilitySchema),
      audit: ref(ScanTypeAvailabilitySchema),
    }),
  },
  { $id: 'CreditBalances' },
);
