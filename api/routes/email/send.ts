import { SendBodySchema, SendResponseSchema } from '../../../core/email/email-schema.ts';
import { asksToSchedule } from '../../../core/email/send/index.ts';
import { startRunsFor } from './scheduled-runs.ts';
import { defineRoute, failure } from '../../route.ts';
import {
  IDEMPOTENCY_FAILURES,
  REPLAYED_HEADER,
  INVALID_PAYLOAD,
  PROVIDER_MESSAGES,
  SEND_AUTH_FAILURES,
  answerOnce,
  sendRequest,
} from './send-request.ts';

/**
 * POST /api/email/send → 200 `{ success, email_id, provider_id, message }`;
 * with `send_at`, 200 `{ success, email_id, scheduled: true, send_at, message }`
 * once the record is written (and its run started, or left to the outbox).
 */
export const sendRoute = defineRoute({
  method: 'post',
  path: '/api/email/send',
  operationId: 'sendEmail',
  summary: 'Send one email',
  ...sendRequest(SendBodySchema),
  responses: {
    200: {
      description: 'Sent: the record is `sent`. With `send_at`: scheduled, the record `pending` until then.',
      schema: SendResponseSchema,
      headers: REPLAYED_HEADER,
    },
    400: INVALID_PAYLOAD,
    ...SEND_AUTH_FAILURES,
    ...IDEMPOTENCY_FAILURES,
    500: {
      ...failure('Not configured, or the provider failed.', PROVIDER_MESSAGES),
      headers: REPLAYED_HEADER,
    },
  },
  async handler(ctx, deps) {
    const { principal } = ctx.state;
    const result = await answerOnce(ctx, deps, 'send', async () => {
      if (!asksToSchedule(ctx.request.body)) return deps.email.send(ctx.request.body, principal);
      const scheduled = await deps.email.scheduled.schedule(ctx.request.body, principal);
      await startRunsFor(deps, principal, [scheduled]);
      return scheduled;
    });
    ctx.body = { success: true, ...result };
  },
});
