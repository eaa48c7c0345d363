import { fileURLToPath } from 'node:url';
import { Worker, type NativeConnection, type WorkerOptions } from '@temporalio/worker';
import type { Db } from 'mongodb';
import type { Config } from '../core/config.ts';
import type { EmailService } from '../core/email/contract.ts';
import { createActivities } from '../activities/index.ts';
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

/**
 * The worker both `worker/worker.ts` and the integration tests run: the
 * workflows of workflows/index.ts plus the activities built from `db`,
 * `email` and `config`. Concurrency follows the interface's limit of 20
 * concurrent workflows per worker setup (WORKER_CONCURRENCY): that many
 * workflow tasks, activities and local activities (the short database steps)
 * at a time. The workflow cache keeps the SDK's default (sized from the heap:
 * about a thousand runs), so a burst of runs is not replayed from history.
 */
export async function createWorker(opts: CreateWorkerOptions): Promise<Worker> {
  const { config } = opts;
  const code: Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> = opts.workflowBundleCode
    ? { workflowBundle: { code: opts.workflowBundleCode } }
    : config.workflowBundlePath
      ? { workflowBundle: { codePath: config.workflowBundlePath } }
      : { workflowsPath: WORKFLOWS_PATH };
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace ?? config.temporal.namespace,
    taskQueue: opts.taskQueue,
    ...code,
    activities: createActivities({ db: opts.db, email: opts.email, config, webhooks: opts.webhooks }),
    maxConcurrentWorkflowTaskExecutions: config.workerConcurrency,
    maxConcurrentActivityTaskExecutions: config.workerConcurrency,
    maxConcurrentLocalActivityExecutions: config.workerConcurrency,
    shutdownGraceTime: '10s',
  });
}
