import { MailroomError } from '../errors.ts';
import {
  checkIdentity,
  isComplete,
  UNAUTHORIZED,
  withinReach,
  type Caller,
  type Identity,
  type Principal,
} from '../identity.ts';
import type { EmailRecord } from './records/index.ts';

/**
 * Who may send which email and see which record. Identity headers that are
 * sent must be UUIDs, whatever the template: a malformed header is a broken
 * client, answered 401 even on signup templates.
 */

const unauthorized = () => new MailroomError('unauthorized', UNAUTHORIZED);

/** The caller's identity, every id a lower-cased UUID; 401 when a sent header is malformed. */
export function assertWellFormed(caller: Caller): Identity {
  const identity = checkIdentity(caller);
  if (!identity) throw unauthorized();
  return identity;
}

/**
 * Send and bulk items: an authenticated caller with all three ids, unless the
 * template is one of the signup/login templates (`requiresAuth: false`),
 * which unauthenticated callers may send, narrowed (signup-guard.ts). An
 * unknown or missing template requires authentication, so unauthenticated
 * callers learn nothing.
 */
export function authorizeSend(principal: Principal, requiresAuth: boolean): Identity {
  const identity = assertWellFormed(principal.caller);
  if (requiresAuth && !(principal.authenticated && isComplete(identity))) throw unauthorized();
  if (principal.keyCompanyId !== undefined) return ownedByKey(principal.keyCompanyId, principal, identity);
  // An unauthenticated send (no key; in trusted-headers mode, not all three
  // headers) belongs to no company, whatever other headers came with it: its
  // record is visible to the same user id only (canSee). A workflow run's
  // send acts for its authenticated caller, who owns it.
  return principal.authenticated
    ? identity
    : { companyId: undefined, organizationId: undefined, userId: identity.userId };
}

/**
 * What a key sends belongs to the key's company (and to its organization,
 * for a key bound to one), headers or not: a signup template needs no
 * headers, and a keyed send without `X-Company-Id` would otherwise be
 * recorded without an owner, readable by anyone naming its `X-User-Id` and
 * outside the company's quota and suppression list. Headers that were sent
 * already match the key (api/middleware/authenticate.ts).
 */
function ownedByKey(keyCompanyId: string, principal: Principal, identity: Identity): Identity {
  return {
    ...identity,
    companyId: identity.companyId ?? keyCompanyId,
    organizationId: identity.organizationId ?? principal.boundOrganizationId,
  };
}

/** The status endpoint needs a UUID `X-User-Id`. */
export function authorizeStatus(principal: Principal): Identity & { userId: string } {
  if (!principal.authenticated) throw unauthorized();
  const identity = assertWellFormed(principal.caller);
  if (!identity.userId) throw unauthorized();
  return { ...identity, userId: identity.userId };
}

/**
 * A record is visible to the company that sent it, and to the user who sent
 * it: the interface's status example carries `X-User-Id` alone, so the sender
 * must be able to read its own records that way (unless it names a different
 * company). A record of no company (an unauthenticated send) is the same
 * user id's only, whatever key reads it. A key bound to an organization
 * (`boundOrganizationId`) sees only its company's records sent under that
 * organization. Anyone else is answered "not found", never "forbidden", so
 * existence is not disclosed.
 */
export function canSee(
  identity: Identity,
  record: Pick<EmailRecord, 'company_id' | 'organization_id' | 'user_id'>,
  boundOrganizationId?: string,
): boolean {
  if (record.company_id === null) return record.user_id !== null && record.user_id === identity.userId;
  if (boundOrganizationId !== undefined)
    return (
      identity.companyId !== undefined &&
      withinReach(
        { companyId: record.company_id, organizationId: record.organization_id },
        { companyId: identity.companyId, boundOrganizationId },
      )
    );
  const sameCompany = record.company_id !== null && record.company_id === identity.companyId;
  const sameSender =
    record.user_id !== null &&
    record.user_id === identity.userId &&
    (identity.companyId === undefined || record.company_id === identity.companyId);
  return sameCompany || sameSender;
}
