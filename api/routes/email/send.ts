import { SendBodySchema, SendResponseSchema } from '../../../core/email/email-schema.ts';
import { defineRoute, failure } from '../../route.ts';
import {
  IDEMPOTENCY_FAILURES,
  INVALID_PAYLOAD,
  SEND_AUTH_FAILURES,
  answerOnce,
  sendRequest,
} from './send-request.ts';

/** POST /api/email/send → 200 `{ success, email_id, provider_id, message }`. */
export const sendRoute = defineRoute({
  method: 'post',
  path: '/api/email/send',
  operationId: 'sendEmail',
  summary: 'Send one email',
  ...sendRequest(SendBodySchema),
  responses: {
    200: { description: 'Sent: the record is `sent`.', schema: SendResponseSchema },
    400: INVALID_PAYLOAD,
    ...SEND_AUTH_FAILURES,
    ...IDEMPOTENCY_FAILURES,
    500: failure('Not configured, or the provider failed.'),
  },
  async handler(ctx, deps) {
    const result = await answerOnce(ctx, deps, 'send', () =>
      deps.email.send(ctx.request.body, ctx.state.principal),
    );
    ctx.body = { success: true, ...result };
  },
});
