import { BulkRequestSchema, BulkResponseSchema } from '../../../core/email/email-schema.ts';
import { defineRoute, failure } from '../../route.ts';
import { startRunsFor } from './scheduled-runs.ts';
import {
  IDEMPOTENCY_FAILURES,
  REPLAYED_HEADER,
  SEND_AUTH_FAILURES,
  answerOnce,
  sendRequest,
} from './send-request.ts';

/**
 * POST /api/email/bulk → 200 with per-item results, also when some items
 * failed. Authorised as send is: without a key (or, behind a trusted proxy,
 * without all three identity headers) only a bulk of signup templates passes,
 * each item narrowed and rate-limited as its single send would be; anything
 * else → 401 (core/email/send/bulk.ts).
 */
export const bulkRoute = defineRoute({
  method: 'post',
  path: '/api/email/bulk',
  operationId: 'sendBulkEmail',
  summary: 'Send up to 100 emails in batches of 50',
  ...sendRequest(BulkRequestSchema),
  responses: {
    200: {
      description: 'One result per item, in request order.',
      schema: BulkResponseSchema,
      headers: REPLAYED_HEADER,
    },
    400: failure('Invalid envelope.'),
    401: SEND_AUTH_FAILURES[401],
    403: SEND_AUTH_FAILURES[403],
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
