import { Type } from '@sinclair/typebox';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../../../core/email/webhook.ts';
import { defineRoute, failure, OkResponseSchema } from '../../route.ts';

/**
 * POST /api/email/webhooks/sendgrid: SendGrid's Event Webhook. The signature
 * covers the exact bytes sent, so the core gets the raw body, and parses it
 * only after checking the signature (`signed`): an unsigned caller costs a
 * read, never a parse.
 */
/** SendGrid posts batches of up to about a thousand events (well under 1 MB); 5 MB leaves room. */
export const WEBHOOK_BODY_LIMIT = '5mb';

export const webhookRoute = defineRoute({
  method: 'post',
  path: '/api/email/webhooks/sendgrid',
  operationId: 'sendgridEventWebhook',
  summary: "SendGrid's Event Webhook",
  tag: 'email',
  body: {
    schema: Type.Array(Type.Object({}, { additionalProperties: true })),
    limit: WEBHOOK_BODY_LIMIT,
    signed: true,
  },
  // Read by the core from the raw headers; declared for the API reference.
  headers: Type.Object({
    [SIGNATURE_HEADER]: Type.Optional(
      Type.String({
        description: "SendGrid's ECDSA signature of timestamp + raw body (Signed Event Webhook).",
      }),
    ),
    [TIMESTAMP_HEADER]: Type.Optional(Type.String({ description: 'The timestamp the signature covers.' })),
  }),
  responses: {
    200: { description: 'Events applied (unknown ones ignored).', schema: OkResponseSchema },
    400: failure('Not a JSON array of events.'),
    401: failure('Invalid signature, or a timestamp more than 10 minutes from now.'),
    503: failure('No SENDGRID_WEBHOOK_PUBLIC_KEY configured (and unsigned events not allowed).'),
  },
  async handler(ctx, { email }) {
    const rawBody = typeof ctx.request.rawBody === 'string' ? ctx.request.rawBody : '';
    await email.handleSendGridWebhook(rawBody, ctx.headers);
    ctx.body = { success: true };
  },
});
