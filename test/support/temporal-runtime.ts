import { DefaultLogger, Runtime, bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOWS_PATH } from '../../worker/create-worker.ts';

let bundle: Promise<string> | undefined;
/** One webpack bundle of workflows/ per test process, shared by every worker it starts. */
export function workflowBundle(): Promise<string> {
  bundle ??= bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietLogger }).then((b) => b.code);
  return bundle;
}

const noop = () => undefined;
const quietLogger = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: noop };

let runtimeInstalled = false;
/** Workers log through the process-wide Runtime; tests want errors only (TEST_WORKER_LOG_LEVEL=debug for more). */
export function installQuietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  Runtime.install({
    logger: new DefaultLogger(process.env['TEST_WORKER_LOG_LEVEL'] === 'debug' ? 'DEBUG' : 'ERROR'),
  });
}
