import { MailroomError } from '../errors.ts';
import type { Caller } from './contract.ts';
import { UNAUTHORIZED } from './messages.ts';

/**
 * Who is calling, from `X-Company-Id`, `X-Organization-Id`, `X-User-Id`.
 * The seed leaves "how header values are validated" open; DESIGN.md: each a UUID.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID.test(value);

/** An authenticated identity: every id a lower-cased UUID. */
export interface Identity {
  companyId: string | undefined;
  organizationId: string | undefined;
  userId: string | undefined;
}

const unauthorized = () => new MailroomError('unauthorized', UNAUTHORIZED);

const present = (value: string | undefined): value is string => value !== undefined && value !== '';

/**
 * Headers that are sent must be UUIDs, whatever the template: a malformed
 * header is a broken client, answered 401 even on signup templates.
 */
export function assertWellFormed(caller: Caller): Identity {
  const out: Identity = { companyId: undefined, organizationId: undefined, userId: undefined };
  for (const key of ['companyId', 'organizationId', 'userId'] as const) {
    const value = caller[key]?.trim();
    if (!present(value)) continue;
    if (!isUuid(value)) throw unauthorized();
    out[key] = value.toLowerCase();
  }
  return out;
}

/**
 * Send and bulk items: all three headers are required unless the template is
 * one of the signup/login templates (`requiresAuth: false`). An unknown or
 * missing template requires them, so unauthenticated callers learn nothing.
 */
export function authorizeSend(caller: Caller, requiresAuth: boolean): Identity {
  const identity = assertWellFormed(caller);
  if (requiresAuth && (!identity.companyId || !identity.organizationId || !identity.userId))
    throw unauthorized();
  return identity;
}

/** The status endpoint needs a UUID `X-User-Id`. */
export function authorizeStatus(caller: Caller): Identity & { userId: string } {
  const identity = assertWellFormed(caller);
  if (!identity.userId) throw unauthorized();
  return { ...identity, userId: identity.userId };
}
