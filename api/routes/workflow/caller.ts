import type { Context } from 'koa';
import type { Caller } from '../../../core/email/contract.ts';
import { HttpError } from '../../errors.ts';
import { IDENTITY_HEADERS, identityFromHeaders } from '../../identity-headers.ts';

/**
 * The caller's identity headers, when present. They travel with the run as
 * its memo (visible in the Web UI) so activities know on whose behalf they
 * act; the email core authorises with them. Values are opaque here, but
 * bounded and free of control characters because they end up in the memo.
 */
export function callerFromHeaders(ctx: Context): Caller {
  const caller = identityFromHeaders(ctx);
  for (const [field, value] of Object.entries(caller) as Array<[keyof Caller, string]>) {
    if (value.length > 200 || hasControlCharacters(value))
      throw new HttpError(400, `invalid ${IDENTITY_HEADERS[field]} header`);
  }
  return caller;
}

/** CR, LF and other control characters have no business in ids (header injection, log forging). */
export function hasControlCharacters(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}
