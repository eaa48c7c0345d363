import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createLogger } from '../logger.ts';
import { useScratchDatabase } from '../../test/support/scratch-database.ts';
import { createKeyStore } from './key-store.ts';

const logger = createLogger('test', { logLevel: 'silent', logPretty: false });

/**
 * Revocation and last use on the real database, with several gateway
 * replicas (each its own store) at once: on FerretDB an update rewrites the
 * whole document, so a last-use write racing a revocation must not be able
 * to put the key back live.
 */
describe('API keys across replicas', () => {
  const database = useScratchDatabase('keystore');

  it('a key revoked while other replicas record its use stays revoked, and its last use is kept', async () => {
    const company = randomUUID();
    const admin = createKeyStore(database.db, logger);
    const created = await Promise.all(
      Array.from({ length: 40 }, (_, i) => admin.create({ companyId: company, name: `k${i}`, scopes: [] })),
    );
    // Per key: two replicas that never saw it (each writes its first use) and one that revokes it, all at once.
    const revoked = await Promise.all(
      created.map(async ({ key, plaintext }) => {
        const [, , wasRevoked] = await Promise.all([
          createKeyStore(database.db, logger).verify(plaintext),
          createKeyStore(database.db, logger).verify(plaintext),
          createKeyStore(database.db, logger).revoke(key.id, company),
        ]);
        return wasRevoked;
      }),
    );
    assert.ok(revoked.every(Boolean));

    // The use is recorded in the background: wait until every key shows one.
    let listed = await admin.list(company);
    for (let waited = 0; listed.some((k) => k.lastUsedAt === null) && waited < 5_000; waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      listed = await admin.list(company);
    }
    assert.equal(listed.filter((k) => k.lastUsedAt !== null).length, created.length);
    const live = listed.filter((k) => k.revokedAt === null).map((k) => k.id);
    assert.deepEqual(live, [], `keys live again after their revocation: ${live.length}`);
    const fresh = createKeyStore(database.db, logger);
    for (const { plaintext } of created) assert.equal(await fresh.verify(plaintext), undefined);
  });
});
