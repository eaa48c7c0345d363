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

/**
 * The Temporal SDK's log level in tests: errors only (expected activity
 * failures and retries would bury the report), unless LOG_LEVEL asks for more
 * (`LOG_LEVEL=debug npm test`).
 */
export function sdkLogLevel(level = process.env['LOG_LEVEL']): 'TRACE' | 'DEBUG' | 'INFO' | 'ERROR' {
  if (level === 'trace') return 'TRACE';
  if (level === 'debug') return 'DEBUG';
  if (level === 'info') return 'INFO';
  return 'ERROR';
}

/** A logger for the SDK's test helpers (MockActivityEnvironment), at that level. */
export function quietSdkLogger(): DefaultLogger {
  return new DefaultLogger(sdkLogLevel());
}

/** Workers log through the process-wide Runtime, at `sdkLogLevel()`. */
export function installQuietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const level = sdkLogLevel();
  // The native core logs on its own (stderr) unless told otherwise: same level.
  Runtime.install({
    logger: quietSdkLogger(),
    telemetryOptions: { logging: { filter: { core: level, other: level } } },
  });
}
