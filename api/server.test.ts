import { describe, it } from 'node:test';
import { randomUUID } from 'node:crypto';
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
import { startGatewayProcess } from '../test/support/gateway-process.ts';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

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
      const port = await freePort();
      const database = new URL(mongoUri());
      database.pathname = `/${uniqueName('server')}`;
      const gateway = spawn(process.execPath, [RUN_TS, 'api/server.ts'], {
        cwd: ROOT,
        env: {
          PATH: process.env['PATH'],
          PORT: String(port),
          MONGODB_URI: database.toString(),
          TEMPORAL_ADDRESS: '127.0.0.1:1',
          MAILROOM_SECRET: TEST_SECRET,
          LOG_LEVEL: 'warn',
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const base = `http://127.0.0.1:${port}`;
      const exited = new Promise<number | null>((resolve) => gateway.once('exit', (code) => resolve(code)));
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
              RESET_URL: `http://localhost:${port}/api/email/click/AQ.AA`,
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
      const gateway = await startGatewayProcess();
      try {
        gateway.fake.delayMs = 12_000;
        const sent = fetch(`${gateway.base}/api/email/send`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: `Bearer ${gateway.key}`,
            'x-company-id': gateway.company,
            'x-organization-id': gateway.organization,
            'x-user-id': randomUUID(),
          },
          body: JSON.stringify({
            to: 'slow@example.com',
            subject: 'Hi',
            template_id: 'custom',
            html_body: '<p>Hi</p>',
          }),
        });
        // Counted on arrival, then held 12 s: the send is waiting on the provider.
        await gateway.fake.waitForRequests(1);
        process.kill(gateway.pid, 'SIGTERM');
        const answer = await sent;
        assert.equal(answer.status, 200);
        const body = (await answer.json()) as { email_id: string };
        assert.equal(await gateway.exitCode, 0);
        const record = await gateway.db.collection('emails').findOne({ _id: body.email_id as never });
        assert.equal(record?.['status_rank'], 1, 'the record is sent');
      } finally {
        await gateway.stop();
      }
    },
  );
});
