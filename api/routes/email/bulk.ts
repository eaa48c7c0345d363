import { BulkBodySchema, BulkResponseSchema, ErrorResponseSchema } from '../../../core/email/schema.ts';
import { defineRoute } from '../../route.ts';
import { SEND_BODY_LIMIT } from './limits.ts';

/** POST /api/email/bulk → 200 with per-item results, also when some items failed. */
export const bulkRoute = defineRoute({
  method: 'post',
  path: '/api/email/bulk',
  operationId: 'sendBulkEmail',
  summary: 'Send up to 100 emails in batches of 50',
  tag: 'email',
  identity: 'headers',
  body: { schema: BulkBodySchema, limit: SEND_BODY_LIMIT },
  responses: {
    200: { description: 'One result per item, in request order.', schema: BulkResponseSchema },
    400: { description: 'Invalid envelope.', schema: ErrorResponseSchema },
    401: { description: 'Malformed identity headers.', schema: ErrorResponseSchema },
  },
  async handler(ctx, { email }) {
    ctx.body = await email.sendBulk(ctx.request.body, ctx.state.caller);
  },
});
