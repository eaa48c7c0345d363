import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { hasControlCharacters } from '../validation.ts';

/**
 * Email addresses and recipient lists: parsing, normalizing and checking.
 * Pure functions (no I/O), unit-tested in addresses.test.ts.
 */

export interface Address {
  email: string;
  name?: string;
}

/** A recipient field as the interface allows it: string, {email, name}, or an array of either. */
export type RecipientInput =
  string | { email: string; name?: string } | Array<string | { email: string; name?: string }>;

const ajv = new Ajv({ strict: false });
addFormats.default(ajv, ['email']);
const emailFormat = ajv.compile<string>({ type: 'string', format: 'email' });

/** RFC 5321 caps a path at 254 characters. */
export const MAX_ADDRESS_LENGTH = 254;

/**
 * A domain whose last label is all digits is an IP address written without
 * the brackets of an address literal (`a@127.0.0.1`), or no domain at all: no
 * top-level domain is numeric (RFC 3696 §2). The format check lets it through.
 */
const NUMERIC_TOP_LABEL = /\.[0-9]+$/;

export function isValidAddress(email: string): boolean {
  return (
    email.length <= MAX_ADDRESS_LENGTH &&
    !hasControlCharacters(email) &&
    emailFormat(email) &&
    !NUMERIC_TOP_LABEL.test(email)
  );
}

/**
 * The bidirectional embeddings, overrides and isolates: in a name they
 * reorder what a reader sees ("Jane\u202Eexe.gnp" shows as "Janepng.exe").
 * The direction marks (U+200E, U+200F), common in right-to-left names, and
 * the joiner of emoji (U+200D) stay allowed. Global, for the workflows'
 * `replace` of a stored name; tested with `search`, which keeps no state.
 */
export const BIDI_CONTROLS = /[\u202a-\u202e\u2066-\u2069]/g;

/**
 * `@` and every character NFKC folds into it: U+FE6B (small) and U+FF20
 * (full-width), no others as of Unicode 17 (addresses.test.ts walks them
 * all). A reader takes any of them for an address's at sign.
 */
const AT_SIGN = /[@\uFE6B\uFF20]/u;

/**
 * Whether `text` holds an at sign or a look-alike of one. Mail clients show
 * a name alone, so a name holding one (`ceo＠b-corp.example <x@a-corp.example>`)
 * reads as another address: no sender's or Reply-To's display name may
 * (validate.ts), nor an anonymous send's own words (tracking/plain-text.ts).
 */
export function hasAtSign(text: string): boolean {
  return AT_SIGN.test(text);
}

export function isValidDisplayName(name: string): boolean {
  // Header-bound: control characters would allow header injection.
  return !hasControlCharacters(name) && name.search(BIDI_CONTROLS) === -1;
}

/**
 * Surrounding blanks off, unless the value holds a line break anywhere: then
 * it stays as sent, so the address or name check refuses it (a header value
 * with CR or LF is refused wherever it sits, not quietly repaired).
 */
const trimmed = (value: string): string => (/[\r\n]/.test(value) ? value : value.trim());

/** Any of the interface's four recipient forms → a flat list (empty for undefined). */
export function toAddressList(input: RecipientInput | undefined): Address[] {
  if (input === undefined) return [];
  const items = Array.isArray(input) ? input : [input];
  return items.map((item) => {
    if (typeof item === 'string') return { email: trimmed(item) };
    const email = trimmed(item.email);
    const name = item.name === undefined ? undefined : trimmed(item.name);
    return name ? { email, name } : { email };
  });
}

/**
 * Parses a sender string: `addr@example.com` or `Display Name <addr@example.com>`
 * (the name optionally in double quotes). Returns undefined when it is neither.
 */
export function parseMailbox(value: string): Address | undefined {
  const mailbox = trimmed(value);
  if (mailbox.endsWith('>')) {
    // `Name <address>` or `"Name" <address>`. Split by hand: the equivalent
    // regular expression backtracks quadratically on long runs of blanks.
    const open = mailbox.lastIndexOf('<');
    const email = mailbox.slice(open + 1, -1);
    let name = trimmed(mailbox.slice(0, Math.max(open, 0)));
    if (open < 0 || !email || /[<>\s]/.test(email)) return undefined;
    if (name.length >= 2 && name.startsWith('"') && name.endsWith('"')) name = name.slice(1, -1);
    if (/[<>"]/.test(name)) return undefined;
    name = trimmed(name);
    return name ? { email, name } : { email };
  }
  if (/[<>]/.test(mailbox)) return undefined;
  return { email: mailbox };
}

export function isValidMailbox(address: Address): boolean {
  return isValidAddress(address.email) && (address.name === undefined || isValidDisplayName(address.name));
}

/** The address's domain, lower-cased ('' when there is no @). */
export function domainOf(email: string): string {
  const at = email.lastIndexOf('@');
  return at < 0 ? '' : email.slice(at + 1).toLowerCase();
}

/**
 * True when the address is in a blocked domain or one of its subdomains
 * (`blocked.example` also blocks `mail.blocked.example`, not `notblocked.example`).
 * `blocked` entries are lower-case (core/config.ts normalizes them).
 */
export function isBlockedDomain(email: string, blocked: readonly string[]): boolean {
  const domain = domainOf(email).replace(/\.$/, '');
  return blocked.some((b) => domain === b || domain.endsWith(`.${b}`));
}

/**
 * SendGrid refuses a personalization whose address appears twice across
 * to/cc/bcc. Keep the first occurrence (to before cc before bcc), compared
 * case-insensitively.
 */
export function dedupeRecipients(lists: { to: Address[]; cc: Address[]; bcc: Address[] }): {
  to: Address[];
  cc: Address[];
  bcc: Address[];
} {
  const seen = new Set<string>();
  const keep = (list: Address[]) =>
    list.filter((a) => {
      const key = a.email.toLowerCase();
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  return { to: keep(lists.to), cc: keep(lists.cc), bcc: keep(lists.bcc) };
}
