import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { MongoClient } from 'mongodb';
import { fileURLToPath } from 'node:url';
import { freePort, RUN_TS } from '../infra/processes.ts';
import { mongoUri, TEST_SECRET, uniqueName } from '../test/support/env.ts';
import { until } from '../test/support/until.ts';
import { SAMPLE_DATA } from '../templates/samples.ts';
import { FakeSendGrid } from '../infra/fake-sendgrid.ts';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

/** `node api/server.ts` on a free port and a database of its own, api-key mode unless `env` says otherwise. */
async function startGateway(name: string, env: NodeJS.ProcessEnv) {
  const port = await freePort();
  const database = new URL(mongoUri());
  database.pathname = `/${uniqueName(name)}`;
  const gateway = spawn(process.execPath, [RUN_TS, 'api/server.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env['PATH'],
      PORT: String(port),
      MONGODB_URI: database.toString(),
      TEMPORAL_ADDRESS: '127.0.0.1:1',
      MAILROOM_SECRET: TEST_SECRET,
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => gateway.once('exit', (code) => resolve(code)));
  return { gateway, base: `http://127.0.0.1:${port}`, database, exited };
}

/**
 * The gateway process as an operator starts it: api-key mode and the default
 * settings, no SIGNUP_LINK_ORIGINS. It says at start that anonymous signup
 * sends are off, and they are.
 */
describe('the gateway process with default settings', () => {
  it(
    'says at start that SIGNUP_LINK_ORIGINS is unset, and refuses anonymous signup links',
    { timeout: 60_000 },
    async () => {
      const { gateway, base, database, exited } = await startGateway('server', {});
      try {
        const logged: string[] = [];
        createInterface({ input: gateway.stdout }).on('line', (line) => logged.push(line));
        await until('the gateway answers /health', async () => (await fetch(`${base}/health`)).ok);
        // The start-up warnings follow the listening line; a bounded wait for them, never a hang.
        await until('the gateway warns about SIGNUP_LINK_ORIGINS', async () =>
          logged.some((line) => line.includes('SIGNUP_LINK_ORIGINS')),
        );
        const warning = String(JSON.parse(logged.find((line) => line.includes('SIGNUP_LINK_ORIGINS'))!).msg);
        assert.match(warning, /^SIGNUP_LINK_ORIGINS is not set: unauthenticated signup sends .* are refused/);

        // The gateway's own origin is no longer allowed by default: it serves the click redirect.
        const res = await fetch(`${base}/api/email/send`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            to: 'someone@example.com',
            subject: 'Reset',
            template_id: 'password-reset',
            template_data: {
              ...SAMPLE_DATA['password-reset'],
              RESET_URL: `${base.replace('127.0.0.1', 'localhost')}/api/email/click/AQ.AA`,
            },
          }),
        });
        assert.equal(res.status, 400);
        assert.match(
          String(((await res.json()) as { error: unknown }).error),
          /SIGNUP_LINK_ORIGINS is not set/,
        );
      } finally {
        gateway.kill('SIGTERM');
      }
      assert.equal(await exited, 0);
      const client = await MongoClient.connect(database.toString());
      await client.db().dropDatabase();
      await client.close();
    },
  );
});

/**
 * A gateway stopped (SIGTERM) while a send waits on a slow provider: the
 * drain outlasts the provider's wait, so the caller gets its answer and the
 * record is `sent`, never left `pending` with the email gone out unanswered.
 */
describe('the gateway process stopped with SIGTERM', () => {
  it(
    'answers a send still waiting on the provider 12 s after the signal, and exits 0',
    { timeout: 90_000 },
    async () => {
      const fake = await new FakeSendGrid().start();
      fake.delayMs = 12_000;
      const { gateway, base, database, exited } = await startGateway('drain', {
        AUTH_MODE: 'trusted-headers',
        SENDGRID_API_KEY: 'SG.test',
        SENDGRID_BASE_URL: fake.url,
      });
      const client = await MongoClient.connect(database.toString());
      try {
        await until('the gateway answers /health', async () => (await fetch(`${base}/health`)).ok);
        const sent = fetch(`${base}/api/email/send`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-company-id': '6f1c2a7e-0a4b-4c43-9a57-2f0a6c1d9b10',
            'x-organization-id': '0d3f5e8a-4b1c-4f2e-8a6d-7c9b1e2f3a40',
            'x-user-id': '9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d',
          },
          body: JSON.stringify({
            to: 'slow@example.com',
            subject: 'Hi',
            template_id: 'custom',
            html_body: '<p>Hi</p>',
          }),
        });
        // Counted on arrival, then held 12 s: the send is waiting on the provider.
        await fake.waitForRequests(1);
        gateway.kill('SIGTERM');
        const answer = await sent;
        assert.equal(answer.status, 200);
        const body = (await answer.json()) as { email_id: string };
        assert.equal(await exited, 0);
        const record = await client
          .db()
          .collection('emails')
          .findOne({ _id: body.email_id as never });
        assert.equal(record?.['status_rank'], 1, 'the record is sent');
      } finally {
        gateway.kill('SIGKILL');
        await client.db().dropDatabase();
        await client.close();
        await fake.stop();
      }
    },
  );
});
