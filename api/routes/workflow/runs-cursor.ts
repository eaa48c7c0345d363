import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { HttpError } from '../../http-error.ts';
import { CURSOR_INVALID } from '../../../core/workflows/workflow-messages.ts';

/**
 * The runs list's opaque cursor: Temporal's visibility page token, sealed
 * with AES-256-GCM under a key derived from MAILROOM_SECRET, the listing it
 * continues (caller, mode, workflow, filters) bound in as associated data.
 * Sealed, not only signed: Temporal's token names the last run of the page
 * (its run id, start and close times), and that run may be one the caller
 * does not see (another organization's, or the other mode's, of the same
 * company). A cursor edited, forged, or replayed against another listing is
 * a 400; Temporal never sees a token the gateway did not hand out.
 */
const IV_BYTES = 12;
const TAG_BYTES = 16;
const ALGORITHM = 'aes-256-gcm';

const keys = new Map<string, Buffer>();
function keyOf(secret: string): Buffer {
  let key = keys.get(secret);
  if (!key) {
    key = Buffer.from(hkdfSync('sha256', secret, '', 'mailroom runs cursor v2', 32));
    keys.set(secret, key);
  }
  return key;
}

export function encodeCursor(secret: string, scope: string, token: Uint8Array): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(ALGORITHM, keyOf(secret), iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(scope, 'utf8'));
  const sealed = Buffer.concat([cipher.update(token), cipher.final()]);
  return `${Buffer.concat([iv, sealed]).toString('base64url')}.${cipher.getAuthTag().toString('base64url')}`;
}

export function decodeCursor(secret: string, scope: string, cursor: string): Buffer {
  const [body, tag, extra] = cursor.split('.');
  if (!body || !tag || extra !== undefined) throw new HttpError(400, CURSOR_INVALID);
  const bytes = Buffer.from(body, 'base64url');
  const mac = Buffer.from(tag, 'base64url');
  if (bytes.length <= IV_BYTES || mac.length !== TAG_BYTES) throw new HttpError(400, CURSOR_INVALID);
  try {
    const decipher = createDecipheriv(ALGORITHM, keyOf(secret), bytes.subarray(0, IV_BYTES), {
      authTagLength: TAG_BYTES,
    });
    decipher.setAAD(Buffer.from(scope, 'utf8'));
    decipher.setAuthTag(mac);
    return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES)), decipher.final()]);
  } catch {
    throw new HttpError(400, CURSOR_INVALID);
  }
}
