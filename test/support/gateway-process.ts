import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createKeyStore } from '../../core/api-keys/key-store.ts';
import type { Db } from 'mongodb';
import { connectDatabase, type Database } from '../../core/db.ts';
import { SCOPES } from '../../core/identity.ts';
import { createLogger } from '../../core/logger.ts';
import { RUN_TS, freePort } from '../../infra/processes.ts';
import { mongoUri, temporalAddress, TEST_SECRET, uniqueName } from './env.ts';
import { FakeSendGrid } from './fake-sendgrid.ts';

/**
 * The gateway as an attacker meets it: the real server process
 * (api/server.ts, AUTH_MODE=api-key, default limits) on real MongoDB and
 * Temporal, sending to a fake SendGrid, with one API key holding every scope.
 */
export interface GatewayProcess {
  base: string;
  pid: number;
  company: string;
  organization: string;
  /** A valid key of `company`, bound to `organization`, with every scope. */
  key: string;
  /** Why the process ended, if it did. */
  exited(): string | undefined;
  /** Resolves with the exit code once the process ended (null: ended by a signal). */
  exitCode: Promise<number | null>;
  /** The fake SendGrid it sends to (its `delayMs` holds every message). */
  fake: FakeSendGrid;
  /** The gateway's database. */
  db: Db;
  stop(): Promise<void>;
}

const ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));

export interface GatewayProcessOptions {
  /** More environment for the gateway (after the defaults). */
  env?: Record<string, string>;
  /** `host:port` the gateway reaches the database at instead of the test database's own (a proxy in front). */
  mongoHost?: string;
}

export async function startGatewayProcess(
  nodeFlags: string[] = [],
  options: GatewayProcessOptions = {},
): Promise<GatewayProcess> {
  const company = randomUUID();
  const organization = randomUUID();
  const fake = await new FakeSendGrid().start();
  const name = uniqueName('hostile');
  const database: Database = await connectDatabase(mongoUri(), name);
  const keys = createKeyStore(database.db, createLogger('test', { logLevel: 'silent', logPretty: false }));
  const key = (
    await keys.create({ companyId: company, organizationId: organization, name: 'hostile', scopes: SCOPES })
  ).plaintext;
  const url = new URL(mongoUri());
  url.pathname = `/${name}`;
  if (options.mongoHost) url.host = options.mongoHost;
  const port = await freePort();
  const server: ChildProcess = spawn(process.execPath, [...nodeFlags, RUN_TS, 'api/server.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env['PATH'],
      PORT: String(port),
      MONGODB_URI: url.toString(),
      TEMPORAL_ADDRESS: temporalAddress(),
      TEMPORAL_TASK_QUEUE: uniqueName('hostile'),
      SENDGRID_API_KEY: 'SG.test',
      SENDGRID_BASE_URL: fake.url,
      MAILROOM_SECRET: TEST_SECRET,
      AUTH_MODE: 'api-key',
      SIGNUP_LIMIT_PER_IP: '1000000',
      // Signed webhook on: unsigned and forged events get 401, the production answer.
      SENDGRID_WEBHOOK_PUBLIC_KEY: generateKeyPairSync('ec', { namedCurve: 'P-256' })
        .publicKey.export({ format: 'der', type: 'spki' })
        .toString('base64'),
      LOG_LEVEL: 'fatal',
      ...options.env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  let exited: string | undefined;
  server.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const exitCode = new Promise<number | null>((resolve) =>
    server.once('exit', (code, signal) => {
      exited = `exited (code ${code}, signal ${signal}): ${stderr}`;
      resolve(code);
    }),
  );
  const base = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (nodeFlags.length && !exited) {
      server.kill('SIGTERM');
      await new Promise((r) => server.once('exit', r));
    }
    server.kill('SIGKILL');
    await fake.stop();
    await database.db.dropDatabase().catch(() => undefined);
    await database.close();
  };
  for (let i = 0; i < 300 && !exited; i++) {
    const up = await fetch(`${base}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (up)
      return {
        base,
        pid: server.pid!,
        company,
        organization,
        key,
        exited: () => exited,
        exitCode,
        fake,
        db: database.db,
        stop,
      };
    await new Promise((r) => setTimeout(r, 100));
  }
  await stop();
  throw new Error(`the gateway did not start: ${exited ?? 'no answer'}`);
}
