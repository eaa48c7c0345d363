import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * An API key as callers send it: `mr_<id>_<secret>`, or `mr_test_<id>_<secret>`
 * for a test-mode key (its sends never reach a provider: docs/test-mode.md).
 *
 *   id      24 hex characters (96 random bits): names the stored key, so a
 *           lookup is one primary-key read; shown in lists, not a secret.
 *   secret  43 base64url characters (256 random bits): only its SHA-256 is
 *           stored. A fast hash is right for a secret this long (nothing to
 *           brute-force); a slow password hash would only slow every request.
 */
const PREFIX = 'mr_';
const ID_HEX = 24;
const SECRET_BYTES = 32;
const SECRET_CHARS = 43;
const SHAPE = new RegExp(`^${PREFIX}(test_)?([0-9a-f]{${ID_HEX}})_([A-Za-z0-9_-]{${SECRET_CHARS}})$`);

export interface NewKey {
  id: string;
  /** What the operator pastes into the product's configuration; shown once. */
  plaintext: string;
  secretHash: string;
}

export function generateKey(test = false): NewKey {
  const id = randomBytes(ID_HEX / 2).toString('hex');
  const secret = randomBytes(SECRET_BYTES).toString('base64url');
  return { id, plaintext: `${PREFIX}${test ? 'test_' : ''}${id}_${secret}`, secretHash: hashSecret(secret) };
}

/** The id and secret of a well-formed key; undefined for anything else. */
export function parseKey(plaintext: string): { id: string; secret: string; test: boolean } | undefined {
  const match = SHAPE.exec(plaintext);
  return match ? { id: match[2]!, secret: match[3]!, test: match[1] !== undefined } : undefined;
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Constant-time comparison of a presented secret with the stored hash. */
export function secretMatches(secret: string, storedHash: string): boolean {
  const presented = Buffer.from(hashSecret(secret), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}
