import { Type } from '@sinclair/typebox';
import { OkResponseSchema } from '../../../core/email/schema.ts';
import { defineRoute, failure } from '../../route.ts';

/**
 * POST /api/email/webhooks/sendgrid: SendGrid's Event Webhook. The signature
 * covers the exact bytes sent, so the core gets the raw body, not the parsed one.
 */
export const webhookRoute = defineRoute({
  method: 'post',
  path: '/api/email/webhooks/sendgrid',
  operationId: 'sendgridEventWebhook',
  summary: "SendGrid's Event Webhook",
  tag: 'email',
  body: { schema: Type.Array(Type.Object({}, { additionalProperties: true })), limit: '45mb' },
  responses: {
    200: { description: 'Events applied (unknown ones ignored).', schema: OkResponseSchema },
    400: failure('Not a JSON array of events.'),
    401: failure('Invalid signature.'),
  },
  async handler(ctx, { email }) {
    const rawBody = typeof ctx.request.rawBody === 'string' ? ctx.request.rawBody : '';
    await email.handleSendGridWebhook(rawBody, ctx.headers);
    ctx.body = { success: true };
  },
});
