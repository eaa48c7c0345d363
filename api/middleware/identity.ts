import type { Context, Next } from 'koa';
import type { Caller, IdentityField } from '../../core/identity.ts';
import { invalidHeader } from '../../core/workflows/messages.ts';
import { HttpError } from '../http-error.ts';
import type { AppState } from '../types.ts';

/** Where each part of the caller's identity arrives. */
export const IDENTITY_HEADERS = {
  companyId: 'x-company-id',
  organizationId: 'x-organization-id',
  userId: 'x-user-id',
} as const satisfies Record<IdentityField, string>;

/**
 * The identity headers that were sent, trimmed (empty ones left out), as
 * `ctx.state.caller`. Whether they are required and well-formed is decided
 * where they are used: the email core checks UUIDs and answers 401.
 */
export function identity() {
  return async function readIdentity(ctx: Context & { state: AppState }, next: Next): Promise<void> {
    const caller: Caller = {};
    for (const [field, header] of Object.entries(IDENTITY_HEADERS) as Array<[IdentityField, string]>) {
      const value = ctx.get(header).trim();
      if (value) caller[field] = value;
    }
    ctx.state.caller = caller;
    await next();
  };
}

/**
 * For identities a run carries in its memo (visible in the Web UI, kept in
 * its history): opaque here, but bounded and free of control characters
 * (header injection, log forging).
 */
export function memoSafeIdentity() {
  return async function checkMemoSafe(ctx: Context & { state: AppState }, next: Next): Promise<void> {
    for (const [field, value] of Object.entries(ctx.state.caller) as Array<[IdentityField, string]>) {
      if (value.length > 200 || hasControlCharacters(value))
        throw new HttpError(400, invalidHeader(IDENTITY_HEADERS[field]));
    }
    await next();
  };
}

/** CR, LF and other control characters have no business in ids. */
export function hasControlCharacters(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}
