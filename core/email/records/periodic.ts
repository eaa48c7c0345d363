import type { Logger } from '../../logger.ts';

/**
 * A background task run again and again, one run at a time, never taking
 * more than `maxShare` of the process's time: the next run starts
 * `intervalMs` after the last one ended, or later if that run was long
 * (a run of d waits d × (1 − maxShare) ÷ maxShare). A scan that grows with
 * the database (the sweeper on FerretDB: docs/storage.md) so runs less
 * often instead of back to back. A failing run is logged and tried again next time.
 */
export const DEFAULT_MAX_SHARE = 0.05;

export interface PeriodicHandle {
  /** Stops the timer and waits for a run in progress. */
  stop(): Promise<void>;
}

/** How long to wait after a run of `runMs`. */
export function nextDelay(intervalMs: number, runMs: number, maxShare = DEFAULT_MAX_SHARE): number {
  return Math.max(intervalMs, (runMs * (1 - maxShare)) / maxShare);
}

export function startPeriodic(options: {
  run: () => Promise<void>;
  intervalMs: number;
  logger: Logger;
  /** Logged when a run throws. */
  failure: string;
  maxShare?: number;
}): PeriodicHandle {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const schedule = (delay: number) => {
    if (stopped) return;
    timer = setTimeout(tick, delay);
    timer.unref();
  };
  const tick = () => {
    const started = performance.now();
    running = options
      .run()
      .catch((err: unknown) => options.logger.error({ err }, options.failure))
      .finally(() => {
        running = undefined;
        schedule(nextDelay(options.intervalMs, performance.now() - started, options.maxShare));
      });
  };
  schedule(options.intervalMs);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
