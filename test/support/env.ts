import { randomBytes } from 'node:crypto';

/**
 * Integration tests talk to the real Temporal and MongoDB-protocol servers that
 * test/run.ts started (or to TEMPORAL_ADDRESS / MONGODB_URI when the caller set
 * them). Each test file takes its own database name and task queue from
 * `uniqueName`, so files running in parallel never collide.
 */
export function mongoUri(): string {
  const uri = process.env['MONGODB_URI'];
  if (!uri) throw new Error('MONGODB_URI is not set: run integration tests through `npm test` (test/run.ts)');
  return uri;
}

export function temporalAddress(): string {
  const address = process.env['TEMPORAL_ADDRESS'];
  if (!address)
    throw new Error('TEMPORAL_ADDRESS is not set: run integration tests through `npm test` (test/run.ts)');
  return address;
}

export function temporalNamespace(): string {
  return process.env['TEMPORAL_NAMESPACE'] ?? 'default';
}

/** A short unique name for a database or task queue: `prefix_<hex>` (MongoDB db names allow no dots). */
export function uniqueName(prefix: string): string {
  return `${prefix.replace(/[^a-zA-Z0-9_]/g, '_')}_${randomBytes(4).toString('hex')}`;
}

/** MAILROOM_SECRET for configurations built in tests (the real one is required and ≥ 32 characters). */
export const TEST_SECRET = 'test-secret-0123456789abcdef0123456789';
