import { BulkBodySchema, BulkResponseSchema } from '../../../core/email/schema.ts';
import { defineRoute, failure } from '../../route.ts';
import { IDEMPOTENCY_FAILURES, SEND_AUTH_FAILURES, answerOnce, sendRequest } from './send-request.ts';

/** POST /api/email/bulk → 200 with per-item results, also when some items failed. */
export const bulkRoute = defineRoute({
  method: 'post',
  path: '/api/email/bulk',
  operationId: 'sendBulkEmail',
  summary: 'Send up to 100 emails in batches of 50',
  ...sendRequest(BulkBodySchema),
  responses: {
    200: { description: 'One result per item, in request order.', schema: BulkResponseSchema },
    400: failure('Invalid envelope.'),
    ...SEND_AUTH_FAILURES,
    ...IDEMPOTENCY_FAILURES,
  },
  async handler(ctx, deps) {
    ctx.body = await answerOnce(ctx, deps, 'bulk', () =>
      deps.email.sendBulk(ctx.request.body, ctx.state.principal),
    );
  },
});
