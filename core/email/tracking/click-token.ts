import { createHmac, createSecretKey, timingSafeEqual } from 'node:crypto';
import { isUuid } from '../../identity.ts';

/**
 * The signed token of a tracked link, `/api/email/click/{token}`:
 *
 *   base64url(payload) "." base64url(mac)
 *
 *   payload = 0x02 (format version)
 *           ‖ expiry, seconds since the Unix epoch (4 bytes, big-endian)
 *           ‖ the email id's 16 bytes
 *           ‖ the original URL, UTF-8 (as the WHATWG URL parser normalised it)
 *   mac     = the first 16 bytes of HMAC-SHA256(click key, payload)
 *   click key = HMAC-SHA256(MAILROOM_SECRET, "mailroom click-token v1")
 *
 * Properties:
 * - Unforgeable: only a holder of the server secret can produce a token, so
 *   the redirect goes only to URLs Mailroom itself put in an email, and a
 *   click is recorded only for the email it was issued for. (Any key holder
 *   can get a token for any URL by mailing it, hence the expiry below, and
 *   anonymous signup links may never point here: signup-guard.ts.) A 128-bit truncated HMAC-SHA256 (as in RFC 4868) is far beyond
 *   guessing over HTTP.
 * - Expiring: a link redirects for CLICK_LINK_LIFETIME_DAYS after its email
 *   was sent. Any key holder makes tokens for URLs of their choosing (by
 *   mailing them); the expiry bounds how long such a token stays a redirect
 *   through this gateway's domain.
 * - Purpose-bound: the click key is derived from the secret for this use
 *   alone; no other signature Mailroom makes can pass as a click token.
 * - Self-contained: verifying needs no database read, so a valid link keeps
 *   redirecting after its email record is gone.
 * - Not secret: the URL, the email id and the expiry can be read out of the
 *   token (they are in the email anyway); only their integrity is protected.
 * - Strict: one canonical spelling (base64url without padding, re-encoding
 *   must give the same characters), bounded length, checked before any MAC is
 *   computed; the MAC is compared in constant time.
 */

/** 0x02: the first released format (0x01, without expiry, was never released: refused). */
const VERSION = 0x02;
const EXPIRY_BYTES = 4;
const ID_BYTES = 16;
const MAC_BYTES = 16;
const KEY_PURPOSE = 'mailroom click-token v1';

/** Longest original URL that is tracked (UTF-8 bytes); longer links are left as they are. */
export const CLICK_URL_MAX_BYTES = 2048;
/** Longest token the endpoint looks at; the longest token Mailroom makes is ~2.8 KB. */
export const CLICK_TOKEN_MAX_LENGTH = 4096;

const BASE64URL = /^[\w-]+$/;
const BASE64URL_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

export interface ClickTarget {
  emailId: string;
  url: string;
  /** When the link stops redirecting (ms since the epoch). */
  expiresAt: number;
}

export interface ClickTokens {
  /** The token for a link of `emailId`; undefined when the URL is not trackable (not http(s), too long). */
  sign(emailId: string, url: string): string | undefined;
  /**
   * What a token Mailroom signed carries, expired or not (the caller compares
   * `expiresAt`); undefined for anything Mailroom did not sign.
   */
  verify(token: unknown): ClickTarget | undefined;
}

/** How long a new token's link redirects unless told otherwise: CLICK_LINK_LIFETIME_DAYS' default, 365 days. */
export const DEFAULT_CLICK_LIFETIME_MS = 365 * 86_400_000;

export interface ClickTokenOptions {
  /** How long a new token's link redirects; default DEFAULT_CLICK_LIFETIME_MS. */
  lifetimeMs?: number;
  /** The clock (tests); default Date.now. */
  now?: () => number;
}

/** An absolute http(s) URL, normalised by the WHATWG parser; undefined for anything else. */
export function trackableUrl(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  return Buffer.byteLength(url.href) <= CLICK_URL_MAX_BYTES ? url.href : undefined;
}

export function clickTokens(secret: string, options: ClickTokenOptions = {}): ClickTokens {
  // A KeyObject, so each MAC does not import the key again (the click path computes one per hit).
  const key = createSecretKey(createHmac('sha256', secret).update(KEY_PURPOSE).digest());
  const mac = (payload: Buffer) => createHmac('sha256', key).update(payload).digest().subarray(0, MAC_BYTES);
  const now = options.now ?? Date.now;
  const lifetimeMs = options.lifetimeMs ?? DEFAULT_CLICK_LIFETIME_MS;

  return {
    sign(emailId, url) {
      if (!isUuid(emailId)) throw new Error(`click token for a non-UUID email id: ${emailId}`);
      const target = trackableUrl(url);
      if (target === undefined) return undefined;
      const header = Buffer.alloc(1 + EXPIRY_BYTES);
      header[0] = VERSION;
      header.writeUInt32BE(Math.min(Math.ceil((now() + lifetimeMs) / 1000), 0xffffffff), 1);
      const payload = Buffer.concat([
        header,
        Buffer.from(emailId.replace(/-/g, ''), 'hex'),
        Buffer.from(target, 'utf8'),
      ]);
      return `${payload.toString('base64url')}.${mac(payload).toString('base64url')}`;
    },

    verify(token) {
      if (typeof token !== 'string' || token.length > CLICK_TOKEN_MAX_LENGTH) return undefined;
      const dot = token.indexOf('.');
      if (dot <= 0) return undefined;
      const payload = canonicalBase64url(token.slice(0, dot));
      const presented = canonicalBase64url(token.slice(dot + 1));
      if (!payload || !presented || presented.length !== MAC_BYTES) return undefined;
      if (!timingSafeEqual(presented, mac(payload))) return undefined;
      // Signed by us: the rest is well-formed unless the format changed.
      const idAt = 1 + EXPIRY_BYTES;
      if (payload[0] !== VERSION || payload.length <= idAt + ID_BYTES) return undefined;
      const expiresAt = payload.readUInt32BE(1) * 1000;
      const hex = payload.subarray(idAt, idAt + ID_BYTES).toString('hex');
      // sign() put trackableUrl's href here, and the MAC proves it was sign(): not parsed again
      // (the click path verifies a token per hit; the WHATWG parser was a sixth of it).
      const url = payload.subarray(idAt + ID_BYTES).toString('utf8');
      const emailId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
      return { emailId, url, expiresAt };
    },
  };
}

/**
 * The bytes of an unpadded base64url string in its one canonical spelling;
 * undefined otherwise. Canonical means re-encoding the bytes gives the same
 * characters: no length that leaves a lone character (4n + 1), and the bits
 * of the last character that carry no byte are zero. Checked on that last
 * character instead of by re-encoding (the click path does this per hit).
 */
function canonicalBase64url(text: string): Buffer | undefined {
  if (!BASE64URL.test(text)) return undefined;
  const tail = text.length % 4;
  if (tail === 1) return undefined;
  // 2 trailing characters carry 1 byte (4 spare bits), 3 carry 2 bytes (2 spare bits).
  const spareBits = tail === 2 ? 0b1111 : tail === 3 ? 0b11 : 0;
  if ((BASE64URL_ALPHABET.indexOf(text[text.length - 1]!) & spareBits) !== 0) return undefined;
  return Buffer.from(text, 'base64url');
}
