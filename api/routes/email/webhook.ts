import { Type } from '@sinclair/typebox';
import { ErrorResponseSchema, OkResponseSchema } from '../../../core/email/schema.ts';
import { defineRoute } from '../../route.ts';

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
    400: { description: 'Not a JSON array of events.', schema: ErrorResponseSchema },
    401: { description: 'Invalid signature.', schema: ErrorResponseSchema },
  },
  async handler(ctx, { email }) {
    const rawBody = typeof ctx.request.rawBody === 'string' ? ctx.request.rawBody : '';
    await email.handleSendGridWebhook(rawBody, ctx.headers);
    ctx.body = { success: true };
  },
});
