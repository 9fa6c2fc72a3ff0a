import { type Static, Type } from '@sinclair/typebox';
import { COMMENT_VISIBILITIES } from '../../access/rules.ts';
import { DateTimeSchema, Nullable, ref, UuidSchema } from '../../http/schemas.ts';
import { ShortUserSummarySchema } from '../users/users.schemas.ts';

/** Largest `content` accepted, in characters. */
export const MAX_COMMENT_CHARS = 65_536;

export const CommentVisibilitySchema = Type.Unsafe<(typeof COMMENT_VISIBILITIES)[number]>({
  type: 'string',
  enum: [...COMMENT_VISIBILITIES],
});

/** Comment create body (v0 §2.5). `content` is markdown, stored exactly as sent. */
export const CreateCommentSchema = Type.Object(
  {
    content: Type.String({
      minLength: 1,
      maxLength: MAX_COMMENT_CHARS,
      description: `Markdown, stored as sent; at most ${MAX_COMMENT_CHARS} characters. @project and @username ping.`,
    }),
    parent: Type.Optional(Nullable(UuidSchema)),
    visibility: Type.Optional(CommentVisibilitySchema),
  },
  { $id: 'CreateComment', additionalProperties: false },
);
export type CreateComment = Static<typeof CreateCommentSchema>;

export const UpdateCommentSchema = Type.Object(
  { content: Type.String({ minLength: 1, maxLength: MAX_COMMENT_CHARS }) },
  { $id: 'UpdateComment', additionalProperties: false },
);

/** A comment as its readers see it; a deleted comment keeps its place with `content` null. */
export const CommentSchema = Type.Object(
  {
    id: UuidSchema,
    findingId: UuidSchema,
    parent: Nullable(UuidSchema),
    content: Nullable(Type.String()),
    visibility: CommentVisibilitySchema,
    author: Nullable(ref(ShortUserSummarySchema)),
    createdAt: DateTimeSchema,
    editedAt: Nullable(DateTimeSchema),
    deletedAt: Nullable(DateTimeSchema),
    unread: Type.Boolean({
      description:
        'Unread by the caller before this listing: written by someone else after their last read, not deleted. Listing marks the comments read.',
    }),
  },
  { $id: 'Comment' },
);
export type Comment = Static<typeof CommentSchema>;

/** A thread: a top-level comment and its replies, oldest first. */
export const CommentThreadSchema = Type.Object(
  {
    ...CommentSchema.properties,
    replies: Type.Array(ref(CommentSchema)),
  },
  { $id: 'CommentThread' },
);
export type CommentThread = Static<typeof CommentThreadSchema>;

export const CommentThreadsSchema = Type.Object(
  { threads: Type.Array(ref(CommentThreadSchema)) },
  { $id: 'CommentThreads' },
);
