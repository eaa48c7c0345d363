import { Type } from '@sinclair/typebox';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../../../core/email/webhook.ts';
import { defineRoute, failure, OkResponseSchema } from '../../route.ts';

/**
 * SendGrid posts a batch after about 30 seconds or once it reaches 768 KB,
 * whichever comes first (its Event Webhook docs, "Data storage"); 1 MiB
 * leaves room for the event that takes a batch past 768 KB. Every caller is
 * unproven until its body is read, so this is also the most a caller
 * without credentials gets read here (it was 5 MB: fewer trickling sockets
 * filled the room for bodies, api/middleware/body-budget.ts). A post refused
 * for a full room is no loss: SendGrid retries any answer but a 2xx for up
 * to 24 hours.
 */
export const WEBHOOK_BODY_LIMIT = '1mb';

/**
 * POST /api/email/webhooks/sendgrid: SendGrid's Event Webhook. The signature
 * covers the exact bytes sent, so the core gets the raw body, and parses it
 * only after checking the signature (`signed`): an unsigned caller costs a
 * read, never a parse.
 */
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
