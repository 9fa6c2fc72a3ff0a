import { type Static, Type } from '@sinclair/typebox';
import { DateTimeSchema, Nullable, ref, UuidSchema } from '../../http/schemas.ts';

/** A notification of the caller (from a ping in a comment). */
export const NotificationSchema = Type.Object(
  {
    id: UuidSchema,
    kind: Type.String({ description: 'comment_ping' }),
    commentId: Nullable(UuidSchema),
    payload: Type.Object(
      {},
      {
        additionalProperties: true,
        description:
          'For comment_ping: commentId, findingId, findingNumber, findingTitle, repositoryId, repositoryName, companyId, authorId, authorUsername, visibility, excerpt',
      },
    ),
    readAt: Nullable(DateTimeSchema),
    createdAt: DateTimeSchema,
  },
  { $id: 'Notification' },
);
export type Notification = Static<typeof NotificationSchema>;

export const ListNotificationsQuerySchema = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, default: 20 })),
    next: Type.Optional(Type.String({ maxLength: 2048 })),
    unread: Type.Optional(Type.Boolean({ description: 'true: only unread; false: only read; unset: all' })),
  },
  { additionalProperties: false },
);
export type ListNotificationsQuery = Static<typeof ListNotificationsQuerySchema>;

export const NotificationPageSchema = Type.Object(
  {
    notifications: Type.Array(ref(NotificationSchema)),
    nextValue: Nullable(Type.String()),
  },
  { $id: 'NotificationPage' },
);

export const PutWebhookSchema = Type.Object(
  { url: Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2000 }) },
  { $id: 'PutWebhook', additionalProperties: false },
);

/** The webhook as created: the signing secret is shown here once. */
export const WebhookCreatedSchema = Type.Object(
  {
    url: Type.String(),
    secret: Type.String({ description: 'HMAC-SHA256 key of X-Vigil-Signature; shown once' }),
  },
  { $id: 'WebhookCreated' },
);
