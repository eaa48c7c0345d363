/**
 * The credential of an `Authorization: Bearer <token>` header. The scheme's
 * name is case-insensitive (RFC 9110 §11.1), so `bearer` and `BEARER` are
 * read alike; one or more spaces separate it from a token without spaces.
 * Undefined for any other header. (The two character classes cannot
 * overlap, so the match is linear in the header's length.)
 */
const BEARER = /^bearer +(\S+)$/i;

export function bearerToken(authorization: string | undefined): string | undefined {
  return authorization === undefined ? undefined : BEARER.exec(authorization)?.[1];
}
