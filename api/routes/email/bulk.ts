import { BulkRequestSchema, BulkResponseSchema } from '../../../core/email/email-schema.ts';
import { defineRoute, failure } from '../../route.ts';
import { startRunsFor } from './scheduled-runs.ts';
import { IDEMPOTENCY_FAILURES, REPLAYED_HEADER, answerOnce, sendRequest } from './send-request.ts';

/**
 * POST /api/email/bulk → 200 with per-item results, also when some items
 * failed. Never anonymous, not even for the signup templates: without a key
 * (or, behind a trusted proxy, without all three identity headers) → 401,
 * before the body is read.
 */
export const bulkRoute = defineRoute({
  method: 'post',
  path: '/api/email/bulk',
  operationId: 'sendBulkEmail',
  summary: 'Send up to 100 emails in batches of 50',
  ...sendRequest(BulkRequestSchema),
  auth: { scope: 'email:send', completeIdentity: true },
  responses: {
    200: {
      description: 'One result per item, in request order.',
      schema: BulkResponseSchema,
      headers: REPLAYED_HEADER,
    },
    400: failure('Invalid envelope.'),
    401: failure('No valid API key, or not all three identity headers (also for signup templates).'),
    403: failure('The API key lacks the email:send scope.'),
    ...IDEMPOTENCY_FAILURES,
    429: failure(
      "Every item was refused for the company's daily sending limit (`Retry-After`: seconds to UTC midnight); " +
        'a bulk with room for some items answers 200 with the others refused per item.',
    ),
  },
  async handler(ctx, deps) {
    const { principal } = ctx.state;
    ctx.body = await answerOnce(ctx, deps, 'bulk', async () => {
      const result = await deps.email.sendBulk(ctx.request.body, principal);
      // Items with `send_at` were scheduled: their runs (scheduled-runs.ts).
      const scheduled = result.results.flatMap((r) =>
        r.scheduled && r.email_id && r.send_at ? [{ email_id: r.email_id, send_at: r.send_at }] : [],
      );
      if (scheduled.length) await startRunsFor(deps, principal, scheduled);
      return result;
    });
  },
});
