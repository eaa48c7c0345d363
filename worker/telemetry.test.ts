import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { freePort } from '../infra/services.ts';
import { startEmailCore, type EmailCore } from '../test/support/email-core.ts';
import { temporalAddress, temporalNamespace, uniqueName } from '../test/support/env.ts';
import { Scrape } from '../test/support/metrics.ts';
import { workflowBundle } from '../test/support/temporal-runtime.ts';
import { createWorker } from './create-worker.ts';
import { telemetryOptions } from './telemetry.ts';

/**
 * WORKER_METRICS_ADDRESS: a real worker (createWorker, polling the real
 * Temporal server) with the Runtime installed the way worker/worker.ts does
 * serves the SDK's own Prometheus metrics there. The Runtime is per process,
 * so this file installs its own.
 */
describe('worker metrics (WORKER_METRICS_ADDRESS)', () => {
  let core: EmailCore;
  let connection: NativeConnection;
  let worker: Worker;
  let running: Promise<void>;
  let address: string;

  before(async () => {
    address = `127.0.0.1:${await freePort()}`;
    Runtime.install({
      logger: new DefaultLogger('ERROR'),
      telemetryOptions: telemetryOptions({ workerMetricsAddress: address }),
    });
    core = await startEmailCore({
      name: 'worker_metrics',
      env: { TEMPORAL_ADDRESS: temporalAddress(), WORKER_METRICS_ADDRESS: address },
    });
    connection = await NativeConnection.connect({ address: temporalAddress() });
    worker = await createWorker({
      connection,
      taskQueue: uniqueName('metrics'),
      db: core.database.db,
      email: core.email,
      config: core.config,
      namespace: temporalNamespace(),
      workflowBundleCode: await workflowBundle(),
    });
    running = worker.run();
  });

  after(async () => {
    if (worker?.getState() === 'RUNNING') worker.shutdown();
    await running?.catch(() => undefined);
    await connection?.close();
    await core?.close();
  });

  it('reads the address from the configuration; unset means no exporter', () => {
    assert.equal(core.config.workerMetricsAddress, address);
    assert.equal(telemetryOptions({ workerMetricsAddress: undefined }), undefined);
  });

  it("serves the Temporal SDK's metrics of the running worker in Prometheus format", async () => {
    // The worker polls as soon as it runs; its pollers and slots show in the exporter.
    const scrape = await Scrape.of(`http://${address}/metrics`);
    const temporal = scrape.samples.filter((s) => s.name.startsWith('temporal_'));
    assert.ok(temporal.length > 0, 'temporal_* series are exposed');
    const taskQueues = new Set(temporal.map((s) => s.labels['task_queue']).filter(Boolean));
    assert.ok(
      [...taskQueues].some((q) => q?.startsWith('metrics_')),
      `series carry this worker's task queue (got ${[...taskQueues].join(', ')})`,
    );
  });
});
