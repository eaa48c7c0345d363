import type { Reach, Scope } from '../../../core/identity.ts';
import type { RouteAuth } from '../../middleware/authenticate.ts';
import type { AppContext } from '../../types.ts';
import { failure, type RouteSpec } from '../../route.ts';
import { workflowByName } from './workflow-by-name.ts';
import { UNAUTHORIZED } from '../../../core/identity.ts';

/**
 * Who a workflow route acts for, and on which workflow. Every run belongs to
 * a company: the API key's (AUTH_MODE=api-key) or, behind a trusted proxy,
 * the caller the three identity headers name. The run carries that identity
 * in its memo; GET and DELETE see only the company's own runs. The workflow
 * named in the path is looked up once the caller is proven (an unproven one
 * is 401 whatever the name). One entry per verb, spread into every route
 * under `/api/workflow/:workflowName`, so none has the one without the other.
 */
const access = (scope: Scope) =>
  ({
    auth: { scope, identityFromKey: true, company: true, wholeCaller: true } satisfies RouteAuth,
    resolve: workflowByName,
  }) as const satisfies Partial<RouteSpec>;

export const WORKFLOW_ACCESS = {
  trigger: access('workflows:trigger'),
  read: access('workflows:read'),
  cancel: access('workflows:cancel'),
  schedule: access('workflows:schedule'),
};

export const WORKFLOW_AUTH_FAILURES = {
  401: failure(
    'No valid API key (or, behind a trusted proxy, not all three identity headers: X-Company-Id, ' +
      'X-Organization-Id and X-User-Id, each a UUID).',
    [UNAUTHORIZED],
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
