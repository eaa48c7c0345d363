import { QuotaResponseSchema } from '../../../core/email/send/index.ts';
import { defineRoute, failure } from '../../route.ts';

/**
 * GET /api/email/quota → `{ success, data: { daily_limit, used_today,
 * remaining, resets_at } }`: the calling key's company's daily sending limit
 * (set by the operator, `npm run keys -- quota`) and today's use. Any key of
 * the company that may send or manage keys may read it.
 */
export const quotaRoute = defineRoute({
  method: 'get',
  path: '/api/email/quota',
  operationId: 'getSendingQuota',
  summary: "The company's daily sending limit and today's use",
  description:
    'Over the limit, sends answer 429 `daily sending limit reached.` with `Retry-After` (seconds to UTC ' +
    'midnight). Test-mode sends never count.',
  tag: 'email',
  auth: { scope: ['email:send', 'keys:manage'], identityFromKey: true, company: true },
  responses: {
    200: { description: 'The quota.', schema: QuotaResponseSchema },
    401: failure('No valid API key, or identity headers that do not match it.'),
    403: failure('The API key has neither the email:send nor the keys:manage scope.'),
  },
  async handler(ctx, { email }) {
    ctx.body = { success: true, data: await email.quotaOf(ctx.state.company.companyId) };
  },
});
