import type { EndpointOwner } from '../../../core/webhooks/index.ts';
import type { RouteAuth } from '../../middleware/authenticate.ts';
import { failure } from '../../route.ts';
import type { AppContext } from '../../types.ts';

/** Every webhook route: a key with `webhooks:manage`, acting for its company. */
export const MANAGE_WEBHOOKS: RouteAuth = { scope: 'webhooks:manage', identityFromKey: true, company: true };

export const WEBHOOK_AUTH_FAILURES = {
  401: failure('No valid API key.'),
  403: failure('The API key lacks the webhooks:manage scope.'),
};

export const ENDPOINT_NOT_FOUND = 'webhook endpoint not found';
export const DELIVERY_NOT_FOUND = 'webhook delivery not found';

/**
 * Whose endpoints the caller sees: its company's, only its organization's
 * when its key is bound to one, and test-mode ones only with a test-mode key
 * (which receive test-mode events only).
 */
export const ownerOf = (ctx: AppContext): EndpointOwner => ({
  companyId: ctx.state.company.companyId,
  organizationId: ctx.state.principal.boundOrganizationId ?? null,
  test: ctx.state.principal.test === true,
});
