import type { Logger } from '../../core/logger.ts';

/** How often the tracking routes' summary line is written (when they had requests). */
export const ACCESS_SUMMARY_INTERVAL_MS = 10_000;

/**
 * The tracking routes (the open pixel, click redirects) are hit once per
 * email opened or link followed: a line per request would cost them about
 * half their throughput (measured in docs/benchmarks.md) and flood the logs
 * with lines nobody reads one by one. They get one summary line per route
 * every ACCESS_SUMMARY_INTERVAL_MS instead: requests by status and the
 * slowest; their failures (5xx) are still logged one by one, and every
 * request is counted in the HTTP metrics.
 */
export function createAccessSummary(logger: Logger, intervalMs = ACCESS_SUMMARY_INTERVAL_MS) {
  type Tally = { requests: number; statuses: Record<number, number>; maxMs: number; since: number };
  const tallies = new Map<string, Tally>();

  function flush(): void {
    for (const [route, tally] of tallies) {
      logger.info(
        {
          route,
          requests: tally.requests,
          statuses: tally.statuses,
          maxMs: tally.maxMs,
          since: new Date(tally.since).toISOString(),
        },
        'requests summary',
      );
    }
    tallies.clear();
  }

  const timer = setInterval(flush, intervalMs);
  timer.unref();

  return {
    add(route: string, status: number, ms: number): void {
      let tally = tallies.get(route);
      if (!tally) tallies.set(route, (tally = { requests: 0, statuses: {}, maxMs: 0, since: Date.now() }));
      tally.requests++;
      tally.statuses[status] = (tally.statuses[status] ?? 0) + 1;
      if (ms > tally.maxMs) tally.maxMs = ms;
    },
    /** Writes what is pending now (shutdown, tests). */
    flush,
    stop(): void {
      clearInterval(timer);
      flush();
    },
  };
}

export type AccessSummary = ReturnType<typeof createAccessSummary>;

/** The summarised routes: `GET /api/email/track` and `GET /api/email/click/:token`. */
export function summarisedRoute(method: string, path: string): string | undefined {
  if (method !== 'GET' && method !== 'HEAD') return undefined;
  if (path === '/api/email/track') return `${method} /api/email/track`;
  if (path.startsWith('/api/email/click/')) return `${method} /api/email/click/:token`;
  return undefined;
}
