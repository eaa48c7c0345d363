import { createHmac, timingSafeEqual } from 'node:crypto';
import { HttpError } from '../../http-error.ts';
import { CURSOR_INVALID } from '../../../core/workflows/workflow-messages.ts';

/**
 * The runs list's opaque cursor: Temporal's visibility page token, signed
 * (HMAC-SHA-256 with MAILROOM_SECRET, 128 bits) together with the listing it
 * continues (caller, workflow, filters). A cursor edited, forged, or replayed
 * against another company's or another filter's listing is a 400; Temporal
 * never sees a token the gateway did not hand out.
 */
const MAC_BYTES = 16;

const macOf = (secret: string, scope: string, token: Buffer) =>
  createHmac('sha256', secret)
    .update('mailroom runs cursor\0')
    .update(scope)
    .update('\0')
    .update(token)
    .digest()
    .subarray(0, MAC_BYTES);

export function encodeCursor(secret: string, scope: string, token: Uint8Array): string {
  const bytes = Buffer.from(token);
  return `${bytes.toString('base64url')}.${macOf(secret, scope, bytes).toString('base64url')}`;
}

export function decodeCursor(secret: string, scope: string, cursor: string): Buffer {
  const [token, mac, extra] = cursor.split('.');
  if (!token || !mac || extra !== undefined) throw new HttpError(400, CURSOR_INVALID);
  const bytes = Buffer.from(token, 'base64url');
  const given = Buffer.from(mac, 'base64url');
  const expected = macOf(secret, scope, bytes);
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    throw new HttpError(400, CURSOR_INVALID);
  return bytes;
}
