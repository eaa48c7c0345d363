import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';
import type { Logger } from '../../core/logger.ts';
import { createAccessSummary, summarisedRoute, type AccessSummary } from './access-summary.ts';

/** A caller's own X-Request-Id is echoed when it is short and printable; otherwise we make one. */
const ACCEPTABLE_REQUEST_ID = /^[\w.:-]{1,128}$/;

/**
 * One structured line per request (method, path, status, duration) and an
 * `X-Request-Id` on every answer, so a client's report can be found in the logs.
 * The tracking routes get a periodic summary line instead (access-summary.ts),
 * except their failures.
 * The path is logged without its query string: the tracking pixel's view key is
 * a secret and has no business in log files.
 */
export function requestLog(logger: Logger, summary = createAccessSummary(logger)) {
  const finish = accessLog(logger, summary);
  return async function logRequest(ctx: Context, next: Next): Promise<void> {
    const started = process.hrtime.bigint();
    const requestId = assignRequestId(ctx);
    try {
      await next();
    } finally {
      finish(ctx, requestId, started);
    }
  };
}

/** Sets `X-Request-Id` on the answer (the caller's own when acceptable) and returns it. */
export function assignRequestId(ctx: Context): string {
  const requestId = requestIdFor(ctx.get('x-request-id'));
  ctx.set('X-Request-Id', requestId);
  return requestId;
}

/** The request id of a request that came with `given` as its `X-Request-Id` (or none). */
export function requestIdFor(given: string | undefined): string {
  return given !== undefined && ACCEPTABLE_REQUEST_ID.test(given) ? given : randomUUID();
}

/**
 * What is logged of a finished request (started at `started`, hrtime): the
 * tracking routes' successes go into the summary, everything else is a line.
 * The tracking routes' listener (tracking-fast-path.ts) does the same with
 * the route it matched: the summary, or logLine for a 5xx.
 */
export function accessLog(logger: Logger, summary: AccessSummary) {
  return function logFinished(ctx: Context, requestId: string, started: bigint): void {
    const ms = Math.round(Number(process.hrtime.bigint() - started) / 1e5) / 10;
    const summarised = summarisedRoute(ctx.method, ctx.path);
    if (summarised !== undefined && ctx.status < 500) summary.add(summarised, ctx.status, ms);
    else logLine(logger, { requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms });
  };
}

/** The line of one request that is not summarised (any request but the tracking routes' successes). */
export function logLine(
  logger: Logger,
  line: { requestId: string; method: string; path: string; status: number; ms: number },
) {
  // Health probes poll every few seconds; keep them out of the info stream.
  if (line.path === '/health' || line.path === '/ready') logger.debug(line, 'request');
  else logger.info(line, 'request');
}
