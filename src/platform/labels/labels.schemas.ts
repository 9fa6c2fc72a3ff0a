import { type Static, Type } from '@sinclair/typebox';
import { DateTimeSchema, Nullable, UuidSchema } from '../../http/schemas.ts';

/** Label (v0 §2.3). */
export const LabelSchema = Type.Object(
  {
    id: UuidSchema,
    name: Type.String(),
    isSystem: Type.Boolean(),
    reviewerRead: Type.Boolean(),
    reviewerUse: Type.Boolean(),
    description: Type.String(),
    archivedAt: Nullable(DateTimeSchema),
  },
  { $id: 'Label' },
);
export type Label = Static<typeof LabelSchema>;

export const CreateLabelSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    reviewerRead: Type.Optional(Type.Boolean()),
    reviewerUse: Type.Optional(Type.Boolean()),
  },
  { $id: 'CreateLabel', additionalProperties: false },
);
export type CreateLabel = Static<typeof CreateLabelSchema>;

export const UpdateLabelSchema = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    reviewerRead: Type.Optional(Type.Boolean()),
    reviewerUse: Type.Optional(Type.Boolean()),
    archived: Type.Optional(Type.Boolean()),
  },
  { $id: 'UpdateLabel', additionalProperties: false, minProperties: 1 },
);
export type UpdateLabel = Static<typeof UpdateLabelSchema>;
