import { randomUUID } from 'node:crypto';
import { SCOPES, type Scope } from '../../core/identity.ts';
import type { EmailTestApp } from './email-app.ts';
import { operatorCommand } from './operator-cli.ts';

/**
 * A new company with one company-wide API key on the test gateway: the
 * bearer header alone (`key`), and with all three identity headers (`auth`).
 */
export async function companyWithKey(app: EmailTestApp, scopes: readonly Scope[] = SCOPES, test = false) {
  const id = randomUUID();
  const { plaintext } = await app.keys.create({
    companyId: id,
    organizationId: null,
    name: 'k',
    scopes: [...scopes],
    test,
  });
  const key = { authorization: `Bearer ${plaintext}` };
  const auth = { ...key, 'x-company-id': id, 'x-organization-id': randomUUID(), 'x-user-id': randomUUID() };
  return { id, key, auth };
}

/** `npm run keys -- …` as the operator runs it: a process on the test gateway's database. */
export function keysCommand(app: EmailTestApp, ...args: string[]): Promise<{ code: number; out: string }> {
  const uri = new URL(process.env['MONGODB_URI']!);
  uri.pathname = `/${app.database.db.databaseName}`;
  return operatorCommand('keys-cli.ts', uri.toString(), args);
}
