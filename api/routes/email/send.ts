import { ErrorResponseSchema, SendBodySchema, SendResponseSchema } from '../../../core/email/schema.ts';
import { defineRoute } from '../../route.ts';
import { SEND_BODY_LIMIT } from './limits.ts';

/** POST /api/email/send → 200 `{ success, email_id, provider_id, message }`. */
export const sendRoute = defineRoute({
  method: 'post',
  path: '/api/email/send',
  operationId: 'sendEmail',
  summary: 'Send one email',
  tag: 'email',
  identity: 'headers',
  body: { schema: SendBodySchema, limit: SEND_BODY_LIMIT },
  responses: {
    200: { description: 'Sent: the record is `sent`.', schema: SendResponseSchema },
    400: { description: 'Invalid payload.', schema: ErrorResponseSchema },
    401: { description: 'Missing or invalid identity.', schema: ErrorResponseSchema },
    500: { description: 'Not configured, or the provider failed.', schema: ErrorResponseSchema },
  },
  async handler(ctx, { email }) {
    const result = await email.send(ctx.request.body, ctx.state.caller);
    ctx.body = { success: true, ...result };
  },
});
