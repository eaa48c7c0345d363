import type { Reach } from '../../../core/identity.ts';
import type { RouteAuth } from '../../middleware/authenticate.ts';
import type { AppContext } from '../../types.ts';
import { failure } from '../../route.ts';

/**
 * Who a workflow route acts for. Every run belongs to a company: the API
 * key's (AUTH_MODE=api-key) or `X-Company-Id` (trusted-headers). The run
 * carries that identity in its memo; GET and DELETE see only the company's
 * own runs.
 */
export const WORKFLOW_AUTH = {
  trigger: { scope: 'workflows:trigger', identityFromKey: true, company: true, wholeCaller: true },
  read: { scope: 'workflows:read', identityFromKey: true, company: true, wholeCaller: true },
  cancel: { scope: 'workflows:cancel', identityFromKey: true, company: true, wholeCaller: true },
  schedule: { scope: 'workflows:schedule', identityFromKey: true, company: true, wholeCaller: true },
} as const satisfies Record<string, RouteAuth>;

export const WORKFLOW_AUTH_FAILURES = {
  401: failure(
    'No valid API key (or, behind a trusted proxy, not all three identity headers: X-Company-Id, ' +
      'X-Organization-Id and X-User-Id, each a UUID).',
  ),
};

/**
 * The runs and schedules a workflow route's caller reaches: its company's,
 * its organization's for a bound key, and of its own mode (a test key's runs
 * and schedules are test ones, a live key's live ones).
 */
export const reachOf = (ctx: Pick<AppContext, 'state'>): Reach => ({
  companyId: ctx.state.company.companyId,
  boundOrganizationId: ctx.state.principal.boundOrganizationId,
  test: ctx.state.company.test === true,
});
