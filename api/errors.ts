import type { Context, Next } from 'koa';
import { isMailroomError, type ErrorKind } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';

/** DESIGN.md, "HTTP status per message". */
const STATUS_BY_KIND: Record<ErrorKind, number> = {
  validation: 400,
  unauthorized: 401,
  not_found: 404,
  not_configured: 500,
  provider_rejected: 500,
  transient: 500,
};

/** An error the gateway itself raises with a given HTTP status. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/**
 * Every failure leaves as `{ success: false, error }`. Client mistakes keep
 * their 4xx (including koa-bodyparser's 400 for malformed JSON and 413 for a
 * body over the limit); anything unexpected is logged and answered with a
 * generic 500 so internals never leak.
 */
export function errorHandler(logger: Logger) {
  return async function handleErrors(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        ctx.status = 404;
        ctx.body = { success: false, error: 'not found' };
      }
    } catch (err) {
      const { status, message } = describe(err);
      if (status >= 500) logger.error({ err, path: ctx.path, method: ctx.method }, 'request failed');
      ctx.status = status;
      ctx.body = { success: false, error: message };
    }
  };
}

function describe(err: unknown): { status: number; message: string } {
  if (isMailroomError(err)) return { status: STATUS_BY_KIND[err.kind], message: err.message };
  if (err instanceof HttpError) return { status: err.status, message: err.message };
  // http-errors from koa / raw-body: `expose` is true for 4xx client errors.
  const e = err as {
    status?: unknown;
    statusCode?: unknown;
    expose?: unknown;
    type?: unknown;
    message?: unknown;
  };
  const status =
    typeof e?.status === 'number' ? e.status : typeof e?.statusCode === 'number' ? e.statusCode : 500;
  if (status === 413 || e?.type === 'entity.too.large')
    return { status: 413, message: 'request body too large.' };
  if (
    status === 400 &&
    (e?.type === 'entity.parse.failed' || /JSON|Unexpected token/i.test(String(e?.message)))
  )
    return { status: 400, message: 'malformed JSON body.' };
  if (status === 415) return { status: 415, message: 'unsupported content type.' };
  if (status >= 400 && status < 500 && e?.expose) return { status, message: String(e.message) };
  return { status: 500, message: 'internal error' };
}
