/**
 * `npm run start:worker`: the Temporal worker process. Runs the workflows and
 * activities on TEMPORAL_TASK_QUEUE until SIGINT/SIGTERM, then drains:
 * in-flight activities get shutdownGraceTime to finish; whatever does not is
 * retried by Temporal on another worker, with the same idempotency keys.
 */
import { NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { loadConfigOrExit } from '../core/config.ts';
import { connectDatabase } from '../core/db.ts';
import { createLogger } from '../core/logger.ts';
import { createEmailService } from '../core/email/service.ts';
import { createWorker } from './create-worker.ts';
import { PinoTemporalLogger } from './temporal-logger.ts';

const config = loadConfigOrExit();
const logger = createLogger('worker', config);
// Signals are ours, not the Runtime's: its handlers only stop running workers,
// so a signal while we still wait for Temporal would be swallowed.
Runtime.install({ logger: new PinoTemporalLogger(logger), shutdownSignals: [] });

const state: { worker?: Worker; stopping: boolean } = { stopping: false };
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

/** Temporal may start after us (docker compose, `npm run dev`): wait for it rather than crash-loop. */
async function connectTemporal(): Promise<NativeConnection> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await NativeConnection.connect({ address: config.temporal.address });
    } catch (err) {
      const delay = Math.min(1000 * 2 ** (attempt - 1), 15_000);
      logger.warn(
        { err: String(err), attempt, retryInMs: delay },
        `Temporal at ${config.temporal.address} unreachable`,
      );
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}

const database = await connectDatabase(config.mongodbUri);
const email = createEmailService({ db: database.db, config, logger });
await email.ensureIndexes();
const connection = await connectTemporal();
const worker = await createWorker({
  connection,
  taskQueue: config.temporal.taskQueue,
  db: database.db,
  email,
  config,
});
logger.info(
  {
    taskQueue: config.temporal.taskQueue,
    namespace: config.temporal.namespace,
    address: config.temporal.address,
  },
  'worker started',
);
state.worker = worker;
try {
  await worker.run();
} finally {
  await connection.close();
  await email.close();
  await database.close();
  logger.info('worker stopped');
}
