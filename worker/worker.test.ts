/**
 * The worker process at start: while MongoDB or Temporal does not answer it
 * retries with backoff, then gives up with one clear line and exit code 1
 * (not a stack trace). Real processes against ports nobody listens on.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MongoClient } from 'mongodb';
import { RUN_TS, freePort } from '../infra/processes.ts';
import { mongoUri, TEST_SECRET, uniqueName } from '../test/support/env.ts';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

async function runWorker(env: Record<string, string>) {
  const child = spawn(process.execPath, [RUN_TS, join(ROOT, 'worker', 'worker.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      MAILROOM_SECRET: TEST_SECRET,
      LOG_LEVEL: 'warn',
      LOG_PRETTY: '',
      WORKER_STARTUP_TIMEOUT_SECONDS: '2',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  // A guard, not an assertion on time: a worker that never gives up must not hang the suite.
  const guard = setTimeout(() => child.kill('SIGKILL'), 90_000);
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  clearTimeout(guard);
  return { code, stdout, stderr };
}

describe('worker start-up', () => {
  it('retries an unreachable MongoDB, then exits 1 with one clear line', async () => {
    const port = await freePort();
    // Each attempt waits up to 5 s for a server; 6 s leaves room for a second one.
    const { code, stdout, stderr } = await runWorker({
      MONGODB_URI: `mongodb://127.0.0.1:${port}/mailroom`,
      WORKER_STARTUP_TIMEOUT_SECONDS: '6',
    });
    assert.equal(code, 1);
    const lines = stderr.trim().split('\n');
    assert.equal(lines.length, 1, stderr);
    assert.match(
      lines[0]!,
      new RegExp(
        `^worker failed to start: MongoDB not reachable at mongodb://127\\.0\\.0\\.1:${port}/mailroom after \\d+ attempt\\(s\\) in \\d+s \\(.+\\)$`,
      ),
    );
    assert.match(stdout, /MongoDB not reachable at .*; retrying in/); // it did wait and retry
    assert.doesNotMatch(lines[0]!, /after 1 attempt/);
  });

  it('retries an unreachable Temporal (MongoDB up), then exits 1 with one clear line', async () => {
    const port = await freePort();
    const url = new URL(mongoUri());
    url.pathname = `/${uniqueName('worker')}`;
    try {
      const { code, stderr } = await runWorker({
        MONGODB_URI: url.toString(),
        TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
      });
      assert.equal(code, 1);
      const lines = stderr.trim().split('\n');
      assert.equal(lines.length, 1, stderr);
      assert.match(
        lines[0]!,
        new RegExp(`^worker failed to start: Temporal not reachable at 127\\.0\\.0\\.1:${port} after `),
      );
    } finally {
      const client = await MongoClient.connect(url.toString());
      await client.db().dropDatabase();
      await client.close();
    }
  });
});
