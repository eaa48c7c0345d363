/**
 * Link variables (`RESET_URL`, `INVOICE_URL`, …): what a valid one is, and
 * the one spelling of it an email may carry.
 *
 * A link is read with the WHATWG URL parser, the parser browsers use, and only
 * its re-serialisation (`url.href`) is ever rendered: in the href, in the
 * visible fallback line and in the text part alike. A raw string can mean
 * different hosts to different parsers (`http://a.example\@b.example/` is
 * a.example to a browser, b.example to RFC 3986 readers and to people), so
 * the raw string never reaches the email; the forms such differences hide in
 * are refused outright: a backslash before the query, credentials
 * (`user:pass@`) or any `@` in the authority, whitespace, control or
 * invisible format characters anywhere, and anything but `http://` or
 * `https://` in front.
 */

export type LinkCheck = { href: string; url: URL } | { problem: string };

export const LINK_NOT_HTTP = 'must be an absolute http(s) URL';
export const LINK_BACKSLASH = 'must not contain a backslash before its query';
export const LINK_CREDENTIALS = 'must not contain credentials or @ before its host';

const HTTP_PREFIX = /^https?:\/\//i;

/** Whitespace (ASCII and Unicode), a control or an invisible format character (zero-width, bidi). */
const BLANK_OR_CONTROL = /[\s\p{Cc}\p{Cf}]/u;

/**
 * `value` as a link an email may carry: `{ href, url }` with the WHATWG
 * parser's serialisation, or the problem in words (for a 400). Leading and
 * trailing spaces are ignored, as the parser does.
 */
export function checkLink(value: string): LinkCheck {
  const raw = value.trim();
  if (!HTTP_PREFIX.test(raw) || BLANK_OR_CONTROL.test(raw)) return { problem: LINK_NOT_HTTP };
  const queryAt = firstOf(raw, '?#', 0);
  if (raw.lastIndexOf('\\', queryAt - 1) >= 0) return { problem: LINK_BACKSLASH };
  // The authority as RFC 3986 reads it: after `://`, up to the first `/`, `?` or `#`.
  const authorityStart = raw.indexOf('//') + 2;
  const authorityEnd = firstOf(raw, '/?#', authorityStart);
  if (raw.slice(authorityStart, authorityEnd).includes('@')) return { problem: LINK_CREDENTIALS };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { problem: LINK_NOT_HTTP };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { problem: LINK_NOT_HTTP };
  if (url.username !== '' || url.password !== '') return { problem: LINK_CREDENTIALS };
  return { href: url.href, url };
}

/** Index of the first character of `chars` in `text` at or after `from`; `text.length` when none. */
function firstOf(text: string, chars: string, from: number): number {
  for (let i = from; i < text.length; i++) if (chars.includes(text[i]!)) return i;
  return text.length;
}
