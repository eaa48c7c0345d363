import { randomBytes } from 'node:crypto';

/**
 * The per-message key in the tracking pixel's URL. 192 random bits, URL-safe
 * (base64url, 32 characters): unguessable, so nobody can mark someone else's
 * email opened, and it reveals nothing about the record.
 */
export function newViewKey(): string {
  return randomBytes(24).toString('base64url');
}
