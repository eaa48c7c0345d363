import { timingSafeEqual } from 'node:crypto';
import { isUuid } from '../../identity.ts';
import { secretBase64url } from '../../secret-bytes.ts';

/**
 * The per-message key in the tracking pixel's URL:
 *
 *   base64url(the email id's 16 bytes)  22 characters, names the record
 * + base64url(18 random bytes)          24 characters, 144 secret bits
 *
 * 46 URL-safe characters. The random part makes it unguessable (nobody can
 * mark someone else's email opened); the email id part makes the lookup a
 * primary-key read (`{ _id }`), which FerretDB's SQLite backend answers with
 * an index, where a `{ view_key }` filter scans and decodes every record.
 * Unique because the email id is. The id part reveals only the email id,
 * which is no credential (status lookups also need the sender's identity).
 */

const ID_CHARS = 22;
const SECRET_BYTES = 18;
export const VIEW_KEY_LENGTH = ID_CHARS + (SECRET_BYTES * 4) / 3;

const SHAPE = new RegExp(`^[A-Za-z0-9_-]{${VIEW_KEY_LENGTH}}$`);

export function newViewKey(emailId: string): string {
  if (!isUuid(emailId)) throw new Error(`view key for a non-UUID email id: ${emailId}`);
  const id = Buffer.from(emailId.replace(/-/g, ''), 'hex').toString('base64url');
  return id + secretBase64url(SECRET_BYTES);
}

/** Right length and alphabet; says nothing about whether the key exists. */
export const looksLikeViewKey = (value: unknown): value is string =>
  typeof value === 'string' && SHAPE.test(value);

/** The email id a well-formed key names (lower-case UUID), or undefined for anything else. */
export function emailIdOfViewKey(viewKey: string): string | undefined {
  if (!looksLikeViewKey(viewKey)) return undefined;
  const prefix = viewKey.slice(0, ID_CHARS);
  const bytes = Buffer.from(prefix, 'base64url');
  // The 22nd character carries 2 bits of the id and 4 padding bits: only the
  // canonical spelling is ours (re-encoding must give the same characters).
  if (bytes.length !== 16 || bytes.toString('base64url') !== prefix) return undefined;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Constant-time comparison of the presented key with the stored one. */
export function viewKeyMatches(presented: string, stored: unknown): boolean {
  if (typeof stored !== 'string') return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(stored);
  return a.length === b.length && timingSafeEqual(a, b);
}
