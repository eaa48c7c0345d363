import type { IncomingMessage } from 'node:http';
import type { Context, Next } from 'koa';
import proxyaddr from 'proxy-addr';
import type { KeyStore } from '../../core/api-keys/key-store.ts';
import type { Config } from '../../core/config.ts';
import { MailroomError } from '../../core/errors.ts';
import { bearerToken } from '../../core/bearer.ts';
import {
  callerOf,
  checkIdentity,
  isComplete,
  UNAUTHORIZED,
  type Caller,
  type IdentityField,
  type Scope,
} from '../../core/identity.ts';
import type { AppState } from '../types.ts';

/** Where each part of the caller's identity arrives. */
export const IDENTITY_HEADERS = {
  companyId: 'x-company-id',
  organizationId: 'x-organization-id',
  userId: 'x-user-id',
} as const satisfies Record<IdentityField, string>;

/** What a route asks of its callers (RouteSpec `auth`). Routes without it are public. */
export interface RouteAuth {
  /** The scope an API key needs for this route; a list: any one of them. */
  scope: Scope | readonly Scope[];
  /**
   * Callers without a key reach the handler as unauthenticated principals;
   * the core decides what they may do (the signup templates, narrowed).
   */
  anonymous?: boolean;
  /**
   * The key's company (and organization) stand in for identity headers the
   * interface does not require on this route; headers that are sent must
   * still match the key.
   */
  identityFromKey?: boolean;
  /**
   * The route acts on something the whole company shares (its suppression
   * list): a key bound to one organization gets 403.
   */
  companyWide?: boolean;
  /**
   * The route acts for a company (workflow runs, the company's keys, its
   * suppression list): `ctx.state.company` is set, else 401.
   */
  company?: boolean;
  /**
   * Behind a trusted proxy the route needs all three identity headers, as a
   * send of a protected template does: what it starts acts as that caller
   * (a workflow run), so the caller is a whole one, user included. A key
   * proves the company itself (`identityFromKey`).
   */
  wholeCaller?: boolean;
}

const unauthorized = () => new MailroomError('unauthorized', UNAUTHORIZED);
export const NEEDS_COMPANY_WIDE_KEY =
  'this API key is bound to an organization; this route acts for the whole company and needs a company-wide key';

/**
 * The client's address as the gateway reads it: behind TRUSTED_PROXIES the
 * one they forwarded (X-Forwarded-For), else the connection's.
 */
export function clientIpReader(trustedProxies: readonly string[]): (req: IncomingMessage) => string {
  const trust = proxyaddr.compile([...trustedProxies]);
  return (req) => proxyaddr(req, trust);
}

/**
 * Establishes `ctx.state.principal`: who is calling, whether that is proven,
 * and from which address.
 *
 * `api-key` (AUTH_MODE): a valid `Authorization: Bearer <key>` proves the
 * company; identity headers that are sent must be UUIDs and match the key's
 * company (and organization, when the key has one), else 401. A key without
 * the route's scope → 403. No key: 401, except on `anonymous` routes. A key
 * bound to an organization makes the principal organization-bound
 * (`boundOrganizationId`): the routes then reach that organization's records,
 * runs and keys only, and `companyWide` routes answer 403.
 *
 * `trusted-headers`: a proxy in front authenticated the caller and set the
 * headers; they are believed as sent (complete headers count as
 * authenticated on `anonymous` routes) and reach the whole company.
 *
 * Either way the principal's ids are the lower-cased UUIDs, so whatever is
 * stored or indexed from them (records, memos, search attributes, keys)
 * is lower-case.
 */
export function authenticate(auth: RouteAuth, deps: { config: Config; keys: KeyStore }) {
  const clientIpOf = clientIpReader(deps.config.trustedProxies);
  return async function authenticateCaller(ctx: Context & { state: AppState }, next: Next): Promise<void> {
    const caller = headersOf(ctx);
    const identity = checkIdentity(caller);
    if (!identity) throw unauthorized();
    const clientIp = clientIpOf(ctx.req);

    if (deps.config.authMode === 'trusted-headers') {
      if (auth.wholeCaller && !isComplete(identity)) throw unauthorized();
      ctx.state.principal = {
        caller: callerOf(identity),
        authenticated: !auth.anonymous || isComplete(identity),
        clientIp,
      };
      return next();
    }

    const presented = ctx.get('authorization');
    if (!presented) {
      if (!auth.anonymous) throw unauthorized();
      // Unproven headers grant nothing: the send is recorded without an owning
      // company. Its X-User-Id is kept: that user id alone may read its status (with a key).
      ctx.state.principal = {
        caller: callerOf({ companyId: undefined, organizationId: undefined, userId: identity.userId }),
        authenticated: false,
        clientIp,
      };
      return next();
    }
    const token = bearerToken(presented);
    const key = token ? await deps.keys.verify(token) : undefined;
    if (!key) throw unauthorized();
    // Who is calling first (headers that contradict the key: 401), then what it may do (403).
    if (identity.companyId !== undefined && identity.companyId !== key.companyId.toLowerCase())
      throw unauthorized();
    if (
      key.organizationId !== null &&
      identity.organizationId !== undefined &&
      identity.organizationId !== key.organizationId.toLowerCase()
    )
      throw unauthorized();
    const accepted: readonly Scope[] = typeof auth.scope === 'string' ? [auth.scope] : auth.scope;
    if (!accepted.some((scope) => key.scopes.includes(scope)))
      throw new MailroomError('forbidden', `this API key lacks the ${accepted.join(' or ')} scope`);
    if (auth.companyWide && key.organizationId !== null)
      throw new MailroomError('forbidden', NEEDS_COMPANY_WIDE_KEY);
    const companyId = key.companyId.toLowerCase();
    const boundOrganizationId = key.organizationId?.toLowerCase();
    ctx.state.principal = {
      caller: callerOf(
        auth.identityFromKey
          ? {
              companyId,
              organizationId: identity.organizationId ?? boundOrganizationId,
              userId: identity.userId,
            }
          : identity,
      ),
      authenticated: true,
      clientIp,
      scopes: key.scopes,
      boundOrganizationId,
      keyCompanyId: companyId,
      ...(key.test ? { test: true } : {}),
    };
    return next();
  };
}

/**
 * The caller of a route that acts for a company (RouteAuth `company`): the
 * key's company, or `X-Company-Id` behind a trusted proxy, on
 * `ctx.state.company`; 401 without one. Every id lower-cased (it goes into
 * memos, search attributes and stored keys). What an organization-bound key
 * may reach: `principal.boundOrganizationId`.
 */
export async function requireCompany(ctx: Context & { state: AppState }, next: Next): Promise<void> {
  const { principal } = ctx.state;
  const caller = principal.authenticated ? checkIdentity(principal.caller) : undefined;
  if (!caller?.companyId) throw unauthorized();
  // A test key's runs carry test mode in their memo (workflows send in test mode too).
  ctx.state.company = {
    ...callerOf(caller),
    companyId: caller.companyId,
    ...(principal.test ? { test: true } : {}),
  };
  await next();
}

/** The identity headers that were sent, trimmed (empty ones left out). */
function headersOf(ctx: Context): Caller {
  const caller: Caller = {};
  for (const [field, header] of Object.entries(IDENTITY_HEADERS) as Array<[IdentityField, string]>) {
    const value = ctx.get(header).trim();
    if (value) caller[field] = value;
  }
  return caller;
}
