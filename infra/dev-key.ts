import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createKeyStore } from '../core/api-keys/key-store.ts';
import { connectDatabase } from '../core/db.ts';
import { SCOPES } from '../core/identity.ts';
import { createLogger } from '../core/logger.ts';

/**
 * A ready-made API key for `npm run dev`, so AUTH_MODE=api-key can be tried
 * at once: every scope, company-wide for a dev company (a key bound to an
 * organization is refused the company's routes, such as the suppression
 * list), with an organization id to send as. Kept in `.data/dev-key.json`
 * (mode 600) and reused while it still verifies and is company-wide.
 */
export interface DevKey {
  key: string;
  companyId: string;
  /** An organization of the dev company, for `X-Organization-Id`. */
  organizationId: string;
}

export async function devKey(mongodbUri: string, file: string): Promise<DevKey> {
  const database = await connectDatabase(mongodbUri);
  try {
    const store = createKeyStore(database.db, createLogger('dev', { logLevel: 'silent', logPretty: false }));
    if (existsSync(file)) {
      const kept = JSON.parse(readFileSync(file, 'utf8')) as DevKey;
      // Earlier versions bound it to the organization: such a key is replaced.
      if ((await store.verify(kept.key))?.organizationId === null) return kept;
    }
    const companyId = randomUUID();
    const organizationId = randomUUID();
    const { plaintext } = await store.create({
      companyId,
      organizationId: null,
      name: 'npm run dev',
      scopes: SCOPES,
    });
    const made = { key: plaintext, companyId, organizationId };
    writeFileSync(file, `${JSON.stringify(made, null, 2)}\n`, { mode: 0o600 });
    return made;
  } finally {
    await database.close();
  }
}
