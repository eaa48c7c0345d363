import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';
import type { Logger } from '../../core/logger.ts';

/** A caller's own X-Request-Id is echoed when it is short and printable; otherwise we make one. */
const ACCEPTABLE_REQUEST_ID = /^[\w.:-]{1,128}$/;

/**
 * One structured line per request (method, path, status, duration) and an
 * `X-Request-Id` on every answer, so a client's report can be found in the logs.
 * The path is logged without its query string: the tracking pixel's view key is
 * a secret and has no business in log files.
 */
export function requestLog(logger: Logger) {
  return async function logRequest(ctx: Context, next: Next): Promise<void> {
    const started = process.hrtime.bigint();
    const given = ctx.get('x-request-id');
    const requestId = ACCEPTABLE_REQUEST_ID.test(given) ? given : randomUUID();
    ctx.set('X-Request-Id', requestId);
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const line = {
        requestId,
        method: ctx.method,
        path: ctx.path,
        status: ctx.status,
        ms: Math.round(ms * 10) / 10,
      };
      // Health probes poll every few seconds; keep them out of the info stream.
      if (ctx.path === '/health' || ctx.path === '/ready') logger.debug(line, 'request');
      else logger.info(line, 'request');
    }
  };
}
