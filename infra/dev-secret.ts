import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * MAILROOM_SECRET for `npm run dev`: made once, kept in `.data/secret` (mode
 * 600) so run ids derived from Idempotency-Keys stay stable across restarts.
 * Production sets its own; nothing outside dev reads this file.
 */
export function devSecret(file: string): string {
  if (existsSync(file)) {
    const kept = readFileSync(file, 'utf8').trim();
    if (kept.length >= 32) return kept;
  }
  const secret = randomBytes(32).toString('hex');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}
