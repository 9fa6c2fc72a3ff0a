import { Type } from '@sinclair/typebox';
import type { App } from '../../http/app-type.ts';
import { UuidSchema, v0Errors } from '../../http/schemas.ts';
import {
  ListNotificationsQuerySchema,
  ListWebhookDeliveriesQuerySchema,
  NotificationPageSchema,
  PutWebhookSchema,
  WebhookCreatedSchema,
  WebhookDeliveryPageSchema,
} from './notifications.schemas.ts';
import type { NotificationsService } from './notifications.service.ts';

const security = [{ UserBearer: [] }];
const tags = ['extension', 'notifications'];

/** The caller's notifications and companies' notification webhooks (extensions, v0 §6). */
export function registerNotificationRoutes(app: App, service: NotificationsService): void {
  app.get(
    '/api/v0/notifications',
    {
      schema: {
        operationId: 'listNotifications',
        tags,
        security,
        summary: "The caller's notifications, newest first",
        querystring: ListNotificationsQuerySchema,
        response: { 200: NotificationPageSchema, ...v0Errors() },
      },
    },
    async (request) => service.list(request.actor, request.query),
  );

  app.put(
    '/api/v0/notifications/:notification_id/read',
    {
      schema: {
        operationId: 'markNotificationRead',
        tags,
        security,
        summary: 'Mark one notification read',
        params: Type.Object({ notification_id: UuidSchema }),
        response: { 204: Type.Null(), ...v0Errors(404) },
      },
    },
    async (request, reply) => {
      await service.markRead(request.actor, request.params.notification_id);
      return reply.code(204).send(null);
    },
  );

  app.put(
    '/api/v0/notifications/read',
    {
      schema: {
        operationId: 'markAllNotificationsRead',
        tags,
        security,
        summary: 'Mark all notifications read',
        response: {
          200: Type.Object({ marked: Type.Integer() }, { $id: 'MarkedNotifications' }),
          ...v0Errors(),
        },
      },
    },
    async (request) => service.markAllRead(request.actor),
  );

  app.put(
    '/api/v0/companies/:company_id/notification-webhook',
    {
      schema: {
        operationId: 'putCompanyNotificationWebhook',
        tags,
        security,
        summary: 'Set the company’s notification webhook (managers); returns its signing secret once',
        description:
          'Every notification of the company’s repositories (but those of hidden comments) is POSTed as JSON with X-Vigil-Delivery, X-Vigil-Timestamp and X-Vigil-Signature: sha256=HMAC-SHA256(secret, "<timestamp>.<body>") in hex. The URL is checked by the outbound policy when saved (400 naming `url` for a loopback, private, link-local or this service’s address, unless VIGIL_OUTBOUND_ALLOW lists it) and again at every connection. A refused destination or a redirect (never followed) fails a delivery for good; other refusals are retried with exponential backoff, up to 7 attempts (listCompanyWebhookDeliveries shows them).',
        params: Type.Object({ company_id: UuidSchema }),
        body: PutWebhookSchema,
        response: { 200: WebhookCreatedSchema, ...v0Errors(404) },
      },
    },
    async (request) => service.putWebhook(request.actor, request.params.company_id, request.body.url),
  );

  app.get(
    '/api/v0/companies/:company_id/notification-webhook/deliveries',
    {
      schema: {
        operationId: 'listCompanyWebhookDeliveries',
        tags,
        security,
        summary: 'The company’s webhook deliveries with their attempts, newest first (managers)',
        description:
          'Each delivery is one notification sent to the company’s webhook, with every attempt: when, the receiver’s status or the error, and the outcome. Company managers and cross-company readers; other company users → 403.',
        params: Type.Object({ company_id: UuidSchema }),
        querystring: ListWebhookDeliveriesQuerySchema,
        response: { 200: WebhookDeliveryPageSchema, ...v0Errors(404) },
      },
    },
    async (request) => service.listWebhookDeliveries(request.actor, request.params.company_id, request.query),
  );

  app.delete(
    '/api/v0/companies/:company_id/notification-webhook',
    {
      schema: {
        operationId: 'deleteCompanyNotificationWebhook',
        tags,
        security,
        summary: 'Remove the company’s notification webhook',
        params: Type.Object({ company_id: UuidSchema }),
        response: { 204: Type.Null(), ...v0Errors(404) },
      },
    },
    async (request, reply) => {
      await service.deleteWebhook(request.actor, request.params.company_id);
      return reply.code(204).send(null);
    },
  );
}
