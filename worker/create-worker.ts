import { fileURLToPath } from 'node:url';
import { Worker, type NativeConnection, type State, type WorkerOptions } from '@temporalio/worker';
import type { Db } from 'mongodb';
import type { Config } from '../core/config.ts';
import type { EmailService } from '../core/email/contract.ts';
import { createActivities } from '../activities/index.ts';
import { webhookTaskQueue } from '../core/webhooks/delivery-workflow.ts';
import type { Webhooks } from '../core/webhooks/index.ts';

/** The workflow bundle's root; Temporal's bundler compiles the .ts (and its .ts imports) itself. */
export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

export interface CreateWorkerOptions {
  connection: NativeConnection;
  taskQueue: string;
  db: Db;
  email: EmailService;
  config: Config;
  webhooks: Webhooks;
  namespace?: string;
  /** Prebuilt bundle code (tests reuse one bundle for many workers); else config.workflowBundlePath, else WORKFLOWS_PATH. */
  workflowBundleCode?: string;
}

/** The worker as its callers use it: both of its Temporal workers, run and stopped together. */
export interface MailroomWorker {
  /** Runs until shut down; if one of the two fails, the other is shut down and the error thrown. */
  run(): Promise<void>;
  /** Starts the drain of both (in-flight tasks get SHUTDOWN_GRACE_SECONDS). */
  shutdown(): void;
  /** The state of the main worker (workflows and steps). */
  getState(): State;
}

/**
 * The worker both `worker/worker.ts` and the integration tests run: the
 * workflows of workflows/index.ts plus the activities built from `db`,
 * `email` and `config`. Concurrency follows the interface's limit of 20
 * concurrent workflows per worker setup (WORKER_CONCURRENCY): that many
 * workflow tasks, activities and local activities (the short database steps)
 * at a time. The workflow cache keeps the SDK's default (sized from the heap:
 * about a thousand runs), so a burst of runs is not replayed from history.
 *
 * Beside it, a worker on the webhook deliveries' task queue
 * (webhookTaskQueue: the delivery runs and their POSTs), with
 * WORKER_CONCURRENCY slots of each kind of its own: a receiver that never
 * answers holds one of those for its timeout, and a backlog of deliveries
 * waits on that queue, so a company's endpoints cannot stall the email
 * steps, the scheduled sends or the runs of the others (they can slow other
 * companies' deliveries: docs/webhooks.md).
 */
export async function createWorker(opts: CreateWorkerOptions): Promise<MailroomWorker> {
  const { config } = opts;
  const code: Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> = opts.workflowBundleCode
    ? { workflowBundle: { code: opts.workflowBundleCode } }
    : config.workflowBundlePath
      ? { workflowBundle: { codePath: config.workflowBundlePath } }
      : { workflowsPath: WORKFLOWS_PATH };
  // The two workers differ only in their task queue.
  const options: Omit<WorkerOptions, 'taskQueue'> = {
    connection: opts.connection,
    namespace: opts.namespace ?? config.temporal.namespace,
    ...code,
    activities: createActivities({ db: opts.db, email: opts.email, config, webhooks: opts.webhooks }),
    // At least 2: the SDK polls the sticky (cached-run) queue beside the
    // normal one and refuses a worker with one workflow task slot.
    maxConcurrentWorkflowTaskExecutions: Math.max(2, config.workerConcurrency),
    maxConcurrentActivityTaskExecutions: config.workerConcurrency,
    maxConcurrentLocalActivityExecutions: config.workerConcurrency,
    // SHUTDOWN_GRACE_SECONDS (40), as the gateway's drain: longer than the
    // email step's 30 s provider call, so a drain asks no step to cancel while
    // its send can still be answered. (A send finishes its call either way;
    // what must wait as long is the kill: compose's stop_grace_period, 45 s.)
    shutdownGraceTime: config.shutdownGraceMs,
  };
  const main = await Worker.create({ ...options, taskQueue: opts.taskQueue });
  const deliveries = await Worker.create({ ...options, taskQueue: webhookTaskQueue(opts.taskQueue) });
  const both = [main, deliveries];
  const shutdown = () => {
    for (const worker of both) if (worker.getState() === 'RUNNING') worker.shutdown();
  };
  return {
    async run() {
      const runs = both.map((worker) => worker.run());
      try {
        await Promise.all(runs);
      } catch (err) {
        shutdown();
        await Promise.allSettled(runs);
        throw err;
      }
    },
    shutdown,
    getState: () => main.getState(),
  };
}
