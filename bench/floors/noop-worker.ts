import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import { loadConfig } from '../../core/config.ts';
import { noopActivities } from './noop-workflow.ts';

/**
 * The worker of the workflow floor: the no-op workflow with the same worker
 * settings as worker/create-worker.ts (concurrency, namespace), on its own
 * task queue (TEMPORAL_TASK_QUEUE). The bundle comes from WORKFLOW_BUNDLE_PATH
 * when set (prebuilt, like ours), else is built at start.
 */
const config = loadConfig(process.env);
const connection = await NativeConnection.connect({ address: config.temporal.address });
const worker = await Worker.create({
  connection,
  namespace: config.temporal.namespace,
  taskQueue: config.temporal.taskQueue,
  ...(config.workflowBundlePath
    ? { workflowBundle: { codePath: config.workflowBundlePath } }
    : { workflowsPath: fileURLToPath(new URL('./noop-workflow.ts', import.meta.url)) }),
  activities: noopActivities,
  maxConcurrentWorkflowTaskExecutions: config.workerConcurrency,
  maxConcurrentActivityTaskExecutions: config.workerConcurrency,
  maxConcurrentLocalActivityExecutions: config.workerConcurrency,
  shutdownGraceTime: '10s',
});
process.once('SIGTERM', () => worker.shutdown());
console.log('noop worker started');
try {
  await worker.run();
} finally {
  await connection.close();
}
