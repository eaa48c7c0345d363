/**
 * `npm run start:worker`: the Temporal worker process. Runs the workflows and
 * activities on TEMPORAL_TASK_QUEUE until SIGINT/SIGTERM, then drains:
 * in-flight activities get SHUTDOWN_GRACE_SECONDS (40, above the provider
 * call's 30 s) to finish; whatever does not is retried by Temporal on another
 * worker, with the same idempotency keys.
 */
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime } from '@temporalio/worker';
import { createWebhooks } from '../core/webhooks/index.ts';
import { loadConfigOrExit } from '../core/config.ts';
import { connectDatabase } from '../core/db.ts';
import { createLogger } from '../core/logger.ts';
import { createEmailService } from '../core/email/service.ts';
import { PRUNE_INTERVAL_MS, pruneExpired, startPeriodic, startSweeper } from '../core/email/records/index.ts';
import { emailsSwept } from '../core/metrics.ts';
import { createWorker, type MailroomWorker } from './create-worker.ts';
import { PinoTemporalLogger } from './temporal-logger.ts';
import { workerMetrics } from './telemetry.ts';

const config = loadConfigOrExit();
const logger = createLogger('worker', config);
const metrics = await workerMetrics(config);
// Signals are ours, not the Runtime's: its handlers only stop running workers,
// so a signal while we still wait for Temporal would be swallowed.
Runtime.install({
  logger: new PinoTemporalLogger(logger),
  shutdownSignals: [],
  ...(metrics ? { telemetryOptions: metrics.telemetryOptions } : {}),
});
if (metrics) {
  try {
    await metrics.listen();
  } catch (err) {
    logger.fatal({ err }, `WORKER_METRICS_ADDRESS ${config.workerMetricsAddress} cannot be bound`);
    process.exit(1);
  }
  logger.info(`metrics (Mailroom and Temporal SDK) on http://${config.workerMetricsAddress}/metrics`);
}

const state: { worker?: MailroomWorker; stopping: boolean } = { stopping: false };
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (state.stopping || !state.worker) {
      // Nothing in flight yet, or a second signal: leave now.
      logger.info({ signal }, 'exiting');
      process.exit(state.worker ? 1 : 0);
    }
    state.stopping = true;
    logger.info({ signal }, 'draining: finishing in-flight tasks');
    state.worker.shutdown();
  });
}

/** The URI without credentials, for log lines. */
const redact = (uri: string) => uri.replace(/\/\/[^@/]*@/, '//***@');
const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err)).split('\n')[0];

/**
 * MongoDB and Temporal may start after us (docker compose, `npm run dev`):
 * retry with backoff (0.5 s doubling to 15 s) like the gateway does, for at
 * most WORKER_STARTUP_TIMEOUT_SECONDS; then one clear line and exit 1 instead
 * of a stack trace.
 */
const startedAt = Date.now();
async function withRetry<T>(what: string, where: string, connect: () => Promise<T>): Promise<T> {
  let delayMs = 500;
  for (let attempt = 1; ; attempt++) {
    try {
      return await connect();
    } catch (err) {
      const left = config.workerStartupTimeoutMs - (Date.now() - startedAt);
      if (left <= 0 || state.stopping) {
        const seconds = ((Date.now() - startedAt) / 1000).toFixed(0);
        console.error(
          `worker failed to start: ${what} not reachable at ${where} after ${attempt} attempt(s) in ${seconds}s (${messageOf(err)})`,
        );
        process.exit(1);
      }
      const wait = Math.min(delayMs, left);
      logger.warn(
        { attempt, err: messageOf(err) },
        `${what} not reachable at ${where}; retrying in ${(wait / 1000).toFixed(1)}s`,
      );
      await new Promise((r) => setTimeout(r, wait));
      delayMs = Math.min(delayMs * 2, 15_000);
    }
  }
}

const database = await withRetry('MongoDB', redact(config.mongodbUri), () =>
  connectDatabase(config.mongodbUri),
);
// The worker's own client: webhook events of its sends and runs are handed to Temporal from here.
const clientConnection = Connection.lazy({ address: config.temporal.address });
const temporalClient = new Client({ connection: clientConnection, namespace: config.temporal.namespace });
const webhooks = createWebhooks({ db: database.db, config, logger, temporal: () => temporalClient });
await webhooks.ensureIndexes();
const email = createEmailService({ db: database.db, config, logger, lifecycle: webhooks.relay.sink });
await email.ensureIndexes();
const connection = await withRetry('Temporal', config.temporal.address, () =>
  NativeConnection.connect({ address: config.temporal.address }),
);
const worker = await createWorker({
  connection,
  taskQueue: config.temporal.taskQueue,
  db: database.db,
  email,
  config,
  webhooks,
});
logger.info(
  {
    taskQueue: config.temporal.taskQueue,
    namespace: config.temporal.namespace,
    address: config.temporal.address,
  },
  'worker started',
);
if (config.appLinksOnGateway.length > 0)
  logger.warn(
    { unset: config.appLinksOnGateway, link_origin: config.publicBaseUrl },
    `the workflow emails link to ${config.appLinksOnGateway.join(' and ')} on this gateway's origin, which serves no such page: set APP_URL to your product's web app`,
  );
state.worker = worker;
// No email record stays pending forever (core/email/sweeper.ts). Each swept
// record is logged with `swept: true` and counted (mailroom_emails_swept_total).
const sweeper = startSweeper({
  sweep: () => email.sweepStuckPending(),
  logger,
  onSwept: (record) => emailsSwept.inc({ outcome: record.outcome }),
});
// Records past EMAIL_RETENTION_DAYS deleted, oldest first, in bounded pages (core/email/records/pruner.ts).
const pruner = startPeriodic({
  run: () =>
    pruneExpired(database.db, logger, { retentionDays: config.emailRetentionDays }).then(() => undefined),
  intervalMs: PRUNE_INTERVAL_MS,
  logger,
  failure: 'pruning expired email records failed',
});
const relay = webhooks.relay.start();
try {
  await worker.run();
} finally {
  await pruner.stop();
  await sweeper.stop();
  await relay.stop();
  await clientConnection.close();
  await connection.close();
  await email.close();
  await database.close();
  await metrics?.close();
  logger.info('worker stopped');
}
