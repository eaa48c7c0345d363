import { BulkRequestSchema, BulkResponseSchema } from '../../../core/email/email-schema.ts';
import {
  BODY_NOT_OBJECT,
  DAILY_LIMIT_REACHED,
  IDEMPOTENCY_KEY_NEEDS_AUTHENTICATION,
  TOO_MANY_EMAILS,
  missingRequiredFields,
} from '../../../core/email/email-messages.ts';
import { IDEMPOTENCY_KEY_INVALID } from '../../../core/validation.ts';
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
      description:
        "One result per item, in request order; a failed item's `error` is the message its single send " +
        'would have answered (`POST /api/email/send`), and the overall `success` is then false.',
      schema: BulkResponseSchema,
      headers: REPLAYED_HEADER,
    },
    400: failure("Invalid envelope (each item's own problems are its `results[].error`).", [
      BODY_NOT_OBJECT,
      missingRequiredFields(['emails']),
      TOO_MANY_EMAILS,
      IDEMPOTENCY_KEY_INVALID,
      IDEMPOTENCY_KEY_NEEDS_AUTHENTICATION,
    ]),
    401: SEND_AUTH_FAILURES[401],
    403: SEND_AUTH_FAILURES[403],
    ...IDEMPOTENCY_FAILURES,
    429: failure(
      "Every item was refused for the company's daily sending limit (`Retry-After`: seconds to UTC midnight); " +
        'a bulk with room for some items answers 200 with the others refused per item.',
      [DAILY_LIMIT_REACHED],
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
