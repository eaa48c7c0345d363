import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RUN_TS, freePort } from '../infra/processes.ts';
import { Scrape } from '../test/support/metrics.ts';
import { WorkflowHarness } from '../test/support/workflow-harness.ts';
import { workerMetrics } from './telemetry.ts';

/**
 * WORKER_METRICS_ADDRESS: the real worker process (worker/worker.ts) serves
 * one scrape target with the Temporal SDK's own metrics and the Mailroom
 * metrics of the emails its activities send.
 */
const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const h = new WorkflowHarness();
let worker: ChildProcess | undefined;
let exited: Promise<number | null> | undefined;
let address = '';
const token = `scrape-${randomUUID()}`;

before(async () => {
  await h.start({ AUTH_MODE: 'trusted-headers' });
  address = `127.0.0.1:${await freePort()}`;
  worker = spawn(process.execPath, [RUN_TS, 'worker/worker.ts'], {
    cwd: ROOT,
    env: h.workerProcessEnv({ WORKER_METRICS_ADDRESS: address, METRICS_TOKEN: token }),
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  exited = new Promise((resolve) => worker!.once('exit', (code) => resolve(code)));
});

after(async () => {
  worker?.kill('SIGTERM');
  await exited;
  await h.stop();
});

describe('worker metrics (WORKER_METRICS_ADDRESS)', () => {
  it('unset: no exporter and no listener', async () => {
    assert.equal(await workerMetrics({ workerMetricsAddress: undefined }), undefined);
  });

  it(
    "serves the Temporal SDK's metrics and the emails the worker's activities sent, to holders of METRICS_TOKEN",
    { timeout: 90_000 },
    async () => {
      const userId = `user-${randomUUID()}`;
      await h.insertUser({ _id: userId, email: `${userId}@example.com`, name: 'Bo' });
      const { body } = await h.trigger('send-welcome-email', { userId });
      await h.waitForStatus('send-welcome-email', String(body['runId']), 'completed', 60_000);

      for (const authorization of [undefined, 'Bearer not-the-token-at-all']) {
        const refused = await fetch(`http://${address}/metrics`, {
          headers: authorization ? { authorization } : {},
        });
        assert.equal(refused.status, 401, 'METRICS_TOKEN is required');
        assert.doesNotMatch(await refused.text(), /temporal_|mailroom_/);
      }
      const scrape = await Scrape.of(`http://${address}/metrics`, { authorization: `Bearer ${token}` });
      assert.match(scrape.contentType, /^text\/plain/);
      const temporal = scrape.samples.filter((s) => s.name.startsWith('temporal_'));
      assert.ok(
        temporal.some((s) => s.labels['task_queue'] === h.taskQueue),
        "Temporal SDK series for this worker's task queue",
      );
      assert.ok(scrape.value('temporal_worker_task_slots_available', { task_queue: h.taskQueue }) > 0);
      // The send ran in the worker process: counted there, not in the gateway.
      assert.equal(scrape.value('mailroom_emails_sent_total', { template: 'welcome' }), 1);
      assert.equal(scrape.value('mailroom_provider_request_duration_seconds_count', { outcome: 'ok' }), 1);
      assert.ok(scrape.has('process_resident_memory_bytes'));
      assert.equal((await fetch(`http://${address}/other`)).status, 404);
    },
  );
});
