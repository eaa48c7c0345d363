import { createHmac, timingSafeEqual } from 'node:crypto';
import { isUuid } from '../identity.ts';

/**
 * The signed token of a tracked link, `/api/email/click/{token}`:
 *
 *   base64url(payload) "." base64url(mac)
 *
 *   payload = 0x01 (format version)
 *           ‖ the email id's 16 bytes
 *           ‖ the original URL, UTF-8 (as the WHATWG URL parser normalised it)
 *   mac     = the first 16 bytes of HMAC-SHA256(click key, payload)
 *   click key = HMAC-SHA256(MAILROOM_SECRET, "mailroom click-token v1")
 *
 * Properties:
 * - Unforgeable: only a holder of the server secret can produce a token, so
 *   the redirect goes only to URLs Mailroom itself put in an email (never an
 *   open redirect), and a click is recorded only for the email it was issued
 *   for. A 128-bit truncated HMAC-SHA256 (as in RFC 4868) is far beyond
 *   guessing over HTTP.
 * - Purpose-bound: the click key is derived from the secret for this use
 *   alone; no other signature Mailroom makes can pass as a click token.
 * - Self-contained: verifying needs no database read, so a valid link keeps
 *   redirecting after its email record is gone.
 * - Not secret: the URL and the email id can be read out of the token (they
 *   are in the email anyway); only their integrity is protected.
 * - Strict: one canonical spelling (base64url without padding, re-encoding
 *   must give the same characters), bounded length, checked before any MAC is
 *   computed; the MAC is compared in constant time.
 */

const VERSION = 0x01;
const ID_BYTES = 16;
const MAC_BYTES = 16;
const KEY_PURPOSE = 'mailroom click-token v1';

/** Longest original URL that is tracked (UTF-8 bytes); longer links are left as they are. */
export const CLICK_URL_MAX_BYTES = 2048;
/** Longest token the endpoint looks at; the longest token Mailroom makes is ~2.8 KB. */
export const CLICK_TOKEN_MAX_LENGTH = 4096;

const BASE64URL = /^[\w-]+$/;

export interface ClickTarget {
  emailId: string;
  url: string;
}

export interface ClickTokens {
  /** The token for a link of `emailId`; undefined when the URL is not trackable (not http(s), too long). */
  sign(emailId: string, url: string): string | undefined;
  /** The email id and URL a token carries, or undefined for anything Mailroom did not sign. */
  verify(token: unknown): ClickTarget | undefined;
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

export function clickTokens(secret: string): ClickTokens {
  const key = createHmac('sha256', secret).update(KEY_PURPOSE).digest();
  const mac = (payload: Buffer) => createHmac('sha256', key).update(payload).digest().subarray(0, MAC_BYTES);

  return {
    sign(emailId, url) {
      if (!isUuid(emailId)) throw new Error(`click token for a non-UUID email id: ${emailId}`);
      const target = trackableUrl(url);
      if (target === undefined) return undefined;
      const payload = Buffer.concat([
        Buffer.from([VERSION]),
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
      if (payload.length <= 1 + ID_BYTES || payload[0] !== VERSION) return undefined;
      const hex = payload.subarray(1, 1 + ID_BYTES).toString('hex');
      const url = trackableUrl(payload.subarray(1 + ID_BYTES).toString('utf8'));
      if (url === undefined) return undefined;
      const emailId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
      return { emailId, url };
    },
  };
}

/** The bytes of an unpadded base64url string in its one canonical spelling; undefined otherwise. */
function canonicalBase64url(text: string): Buffer | undefined {
  if (!BASE64URL.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : undefined;
}
