import { hasAtSign } from '../addresses.ts';

/**
 * What an unauthenticated signup send may put in words of its own (a name
 * variable, a duration, the recipient's display name): a few plain words,
 * never a link, an address or a second line. Otherwise a signup form would be
 * a way to mail anyone a sentence with a phishing link from the company's
 * domain (core/email/signup-guard.ts).
 *
 * "A link" is anything a mail client may turn into one: a scheme (`://`), or
 * a dotted host name (`evil.example`, `www.x`, also with the ideographic full
 * stops IDNA reads as dots). Format characters (zero-width spaces, bidi
 * overrides) are refused with the control characters: they could split a
 * host name so that this check misses it while a reader still sees it.
 * "An address" is an at sign or a look-alike (addresses.ts hasAtSign).
 */

/** Longest name variable or display name of an unauthenticated send (characters). */
export const PLAIN_NAME_MAX_LENGTH = 64;
/** Longest other text variable of an unauthenticated send (characters). */
export const PLAIN_TEXT_MAX_LENGTH = 100;

const CONTROL_OR_FORMAT = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;
/** A letter or digit, a dot (ASCII or one IDNA treats as a dot), two letters: a host name. Linear. */
const DOTTED_NAME = /[\p{L}\p{N}][.\u3002\uFF0E\uFF61]\p{L}{2}/u;

/** Whether `value` is plain text of at most `max` characters (see above). */
export function isPlainText(value: string, max: number): boolean {
  return (
    value.length <= max &&
    !CONTROL_OR_FORMAT.test(value) &&
    !hasAtSign(value) &&
    !value.includes('://') &&
    !DOTTED_NAME.test(value)
  );
}
