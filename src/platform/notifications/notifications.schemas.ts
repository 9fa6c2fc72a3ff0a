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

export const ListWebhookDeliveriesQuerySchema = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, default: 20 })),
    next: Type.Optional(Type.String({ maxLength: 2048 })),
  },
  { $id: 'ListWebhookDeliveriesQuery', additionalProperties: false },
);
export type ListWebhookDeliveriesQuery = Static<typeof ListWebhookDeliveriesQuerySchema>;

/** What an attempt came to. */
export const WebhookAttemptOutcomeSchema = Type.Union(
  [
    Type.Literal('delivered'),
    Type.Literal('retrying'),
    Type.Literal('failed_permanently'),
    Type.Literal('gave_up'),
    Type.Literal('unknown'),
  ],
  {
    $id: 'WebhookAttemptOutcome',
    description:
      'delivered: a 2xx answer; retrying: refused (non-2xx other than a redirect) or not answered, sent again later with the same X-Vigil-Delivery; failed_permanently: a destination the outbound policy refuses, a redirect (never followed), or no webhook left: never sent again; gave_up: refused on the last attempt; unknown: the sender stopped on the last attempt',
  },
);

/** One attempt of a webhook delivery. */
export const WebhookDeliveryAttemptSchema = Type.Object(
  {
    attempt: Type.Integer({ minimum: 1, description: '1 for the first attempt' }),
    startedAt: DateTimeSchema,
    finishedAt: DateTimeSchema,
    statusCode: Nullable(Type.Integer({ description: "the receiver's HTTP status, when it answered" })),
    error: Nullable(Type.String({ description: 'why the attempt did not deliver' })),
    outcome: ref(WebhookAttemptOutcomeSchema),
  },
  { $id: 'WebhookDeliveryAttempt' },
);
export type WebhookDeliveryAttempt = Static<typeof WebhookDeliveryAttemptSchema>;

/** One notification sent (or to be sent) to the company's webhook, with its attempts. */
export const WebhookDeliverySchema = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'the X-Vigil-Delivery header of every attempt' }),
    notificationId: UuidSchema,
    status: Type.Union(
      [
        Type.Literal('pending'),
        Type.Literal('sending'),
        Type.Literal('retrying'),
        Type.Literal('delivered'),
        Type.Literal('failed_permanently'),
        Type.Literal('gave_up'),
        Type.Literal('unknown'),
      ],
      {
        description:
          'pending: not attempted yet; sending: an attempt is under way; retrying: waiting for its next attempt; then the outcome of the last attempt',
      },
    ),
    createdAt: DateTimeSchema,
    deliveredAt: Nullable(DateTimeSchema),
    attempts: Type.Array(ref(WebhookDeliveryAttemptSchema), { description: 'oldest first' }),
  },
  { $id: 'WebhookDelivery' },
);
export type WebhookDelivery = Static<typeof WebhookDeliverySchema>;

export const WebhookDeliveryPageSchema = Type.Object(
  {
    items: Type.Array(ref(WebhookDeliverySchema)),
    nextValue: Nullable(Type.String({ description: 'the `next` of the following page; null on the last' })),
  },
  { $id: 'WebhookDeliveryPage' },
);
