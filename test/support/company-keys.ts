import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { SCOPES, type Scope } from '../../core/identity.ts';
import type { EmailTestApp } from './email-app.ts';

const run = promisify(execFile);

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
export async function keysCommand(
  app: EmailTestApp,
  ...args: string[]
): Promise<{ code: number; out: string }> {
  const uri = new URL(process.env['MONGODB_URI']!);
  uri.pathname = `/${app.database.db.databaseName}`;
  try {
    const { stdout } = await run('npx', ['tsx', 'infra/keys-cli.ts', ...args], {
      env: { ...process.env, MONGODB_URI: uri.toString() },
    });
    return { code: 0, out: stdout };
  } catch (err) {
    const e = err as { code: number; stderr: string };
    return { code: e.code, out: e.stderr };
  }
}
