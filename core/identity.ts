/**
 * Who is calling. Shared by the gateway (which reads it from the request), the
 * email core (which authorises with it) and the workflows (which carry it in a
 * run's memo). Dependency-free, so the workflow sandbox may import it too.
 */

/** The identity a caller claims (`X-Company-Id`, `X-Organization-Id`, `X-User-Id`), as received. */
export interface Caller {
  companyId?: string | undefined;
  organizationId?: string | undefined;
  userId?: string | undefined;
  /** Test mode (a `mr_test_…` key): carried in a run's memo so its sends are test sends too. */
  test?: boolean | undefined;
}

/** A checked identity: each id present is a lower-cased UUID. */
export interface Identity {
  companyId: string | undefined;
  organizationId: string | undefined;
  userId: string | undefined;
}

export const IDENTITY_FIELDS = ['companyId', 'organizationId', 'userId'] as const;
export type IdentityField = (typeof IDENTITY_FIELDS)[number];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID.test(value);

/**
 * The claimed ids, trimmed and lower-cased, or `undefined` when one that was
 * sent is not a UUID (a broken or hostile client).
 */
export function checkIdentity(caller: Caller): Identity | undefined {
  const identity: Identity = { companyId: undefined, organizationId: undefined, userId: undefined };
  for (const field of IDENTITY_FIELDS) {
    const value = caller[field]?.trim();
    if (!value) continue;
    if (!isUuid(value)) return undefined;
    identity[field] = value.toLowerCase();
  }
  return identity;
}

/** The ids of a checked identity that are present, as a Caller (no `undefined` keys: it goes into memos). */
export function callerOf(identity: Identity): Caller {
  const caller: Caller = {};
  for (const field of IDENTITY_FIELDS) if (identity[field] !== undefined) caller[field] = identity[field];
  return caller;
}

/** All three ids present: what the authenticated email and workflow routes require. */
export const isComplete = (identity: Identity): identity is Required<{ [K in IdentityField]: string }> =>
  identity.companyId !== undefined && identity.organizationId !== undefined && identity.userId !== undefined;

/** Missing or malformed identity, or no valid API key: the one answer, for every route. */
export const UNAUTHORIZED = 'unauthorized';

/** The memo key under which a run carries who triggered it (visible in the Temporal Web UI). */
export const CALLER_MEMO_KEY = 'caller';

/** What an API key may do. One scope per kind of call. */
export const SCOPES = [
  'email:send',
  'email:read',
  'workflows:trigger',
  'workflows:read',
  'workflows:cancel',
  'workflows:schedule',
  'webhooks:manage',
  'keys:manage',
] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * The caller as the gateway established it, handed to the core with each call.
 * `authenticated`: proven by a valid API key, by the complete identity headers
 * an authenticating proxy set (`AUTH_MODE=trusted-headers`), or a workflow
 * acting for the authenticated caller that started it. An unauthenticated
 * principal may only use the signup templates, narrowed and rate-limited.
 */
export interface Principal {
  /** The identity headers as sent (the core checks they are UUIDs), or the company of the key. */
  caller: Caller;
  authenticated: boolean;
  /** The client's address (after trusted proxies), for rate limits of unauthenticated calls. */
  clientIp?: string | undefined;
  /** What the caller's API key may do; undefined when not limited by a key (trusted headers, workflows). */
  scopes?: readonly Scope[] | undefined;
  /**
   * The one organization (a lower-cased UUID) the caller's API key is bound
   * to: it sees and manages that organization's records, runs and keys only.
   * Undefined for a company-wide caller (a key without an organization,
   * trusted headers, a workflow acting for its trigger).
   */
  boundOrganizationId?: string | undefined;
  /**
   * The company (a lower-cased UUID) of the API key that proved the caller:
   * what it sends belongs to that company whatever headers it left out.
   * Undefined without a key (trusted headers, workflows).
   */
  keyCompanyId?: string | undefined;
  /** Authenticated by a test-mode key (or a run it started): sends never reach a provider. */
  test?: boolean | undefined;
}

/**
 * Whether something owned by `owner` is within `principal`'s reach: its
 * company, and for an organization-bound key its organization too. Anything
 * else is answered exactly like something that does not exist.
 */
export function withinReach(
  owner: { companyId?: unknown; organizationId?: unknown; test?: unknown },
  principal: Reach,
): boolean {
  const same = (a: unknown, b: string) => typeof a === 'string' && a.toLowerCase() === b;
  return (
    same(owner.companyId, principal.companyId) &&
    (principal.boundOrganizationId === undefined ||
      same(owner.organizationId, principal.boundOrganizationId)) &&
    // Test and live data are apart: a mode given is the mode seen.
    (principal.test === undefined || (owner.test === true) === principal.test)
  );
}

/**
 * What a caller reaches: its company, its organization for a bound key, and,
 * where things carry a mode (runs, schedules), that mode only (`test`).
 */
export interface Reach {
  companyId: string;
  boundOrganizationId?: string | undefined;
  test?: boolean | undefined;
}

/** A caller whose identity is established: a workflow acting for its trigger, a trusted backend. */
export const authenticatedAs = (caller: Caller): Principal => ({
  caller,
  authenticated: true,
  ...(caller.test === true ? { test: true } : {}),
});
