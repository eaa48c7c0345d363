import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context, Next } from 'koa';
import { isMailroomError, type ErrorKind } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import { HttpError, UNSUPPORTED_MEDIA_TYPE } from '../http-error.ts';
import { isDatabaseUnreachable } from '../../core/db.ts';

/** Each kind of domain error as an HTTP status. */
const STATUS_BY_KIND: Record<ErrorKind, number> = {
  validation: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  suppressed: 400,
  rate_limited: 429,
  unavailable: 503,
  not_configured: 500,
  provider_rejected: 500,
  transient: 500,
  outcome_unknown: 500,
  cancelled: 409,
};

export const MALFORMED_JSON = 'malformed JSON body.';
/** Valid JSON refused as a prototype-pollution vector (co-body parses with @hapi/bourne). */
export const PROTOTYPE_KEY = 'request body must not contain a __proto__ key.';
/** What @hapi/bourne's SyntaxError says when it refuses such a key. */
const BOURNE_PROTOTYPE = 'Object contains forbidden prototype property';
export const BODY_TOO_LARGE = 'request body too large.';
export const INTERNAL_ERROR = 'internal error';
/** A request that needed the database while it was down (the same 500 as any failure, with its cause). */
export const DATABASE_UNAVAILABLE =
  'database unavailable: the request could not be completed. retry later; a send with an Idempotency-Key is safe to retry with the same key.';
export const NOT_FOUND = 'not found';
export const METHOD_NOT_ALLOWED = 'method not allowed';

/**
 * Every failure leaves as `{ success: false, error }`. Client mistakes keep
 * their 4xx (including the body parser's 400 for malformed JSON and 413 for a
 * body over the limit); anything unexpected is logged and answered with a
 * generic 500 so internals never leak.
 */
export function errorHandler(logger: Logger) {
  return async function handleErrors(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
      if (ctx.body === undefined || ctx.body === null) answerUnrouted(ctx);
    } catch (err) {
      const { status, message } = describe(err);
      if (status >= 500) logger.error({ err, path: ctx.path, method: ctx.method }, 'request failed');
      ctx.status = status;
      if (isMailroomError(err) && err.retryAfterSeconds !== undefined)
        ctx.set('Retry-After', String(Math.max(1, Math.ceil(err.retryAfterSeconds))));
      ctx.body = { success: false, error: message };
      if (!ctx.req.complete) closeAfterLingering(ctx.req, ctx.res);
    }
  };
}

/**
 * How long a client answered before its body was all read (401 before
 * reading, 413 at a limit) may go on sending it, to be discarded unread, before
 * the connection is closed.
 */
export const LINGER_MS = 2000;

/**
 * Closing at once would lose the answer: the client is still sending, and a
 * close with its bytes unread resets the connection, which discards the answer
 * on the client's side before it is read. So the rest of the body is
 * discarded (never decoded or parsed) for LINGER_MS after the answer, then
 * the connection is closed, so an endless upload ends there.
 */
function closeAfterLingering(req: IncomingMessage, res: ServerResponse): void {
  res.once('finish', () => {
    req.resume();
    // Checked after the loop's next read of the sockets (an immediate runs
    // after the poll): when the event loop was held past LINGER_MS, timers
    // run before the rest of a body that did arrive is read, and the client,
    // having sent it all, may already be sending its next request on this
    // connection: a reset then fails that request (seen once in CI).
    setTimeout(
      () =>
        setImmediate(() => {
          if (!req.complete) req.socket.destroy();
        }),
      LINGER_MS,
    ).unref();
  });
}

/**
 * What the router left without a body: an unknown path (404), or a path
 * asked with a method it does not serve. The router answers a method it has
 * never heard of (TRACE, …) 501, a server error; to the client both are
 * "not this method here": 405 with the router's `Allow` list.
 */
function answerUnrouted(ctx: Context): void {
  if (ctx.status === 405 || ctx.status === 501) {
    if (ctx.response.get('Allow')) {
      ctx.status = 405;
      ctx.body = { success: false, error: METHOD_NOT_ALLOWED };
      return;
    }
    ctx.status = 404;
  }
  if (ctx.status === 404) {
    // Koa turns an implicit 404 into 200 when a body is set: set the status again after it.
    ctx.body = { success: false, error: NOT_FOUND };
    ctx.status = 404;
  }
}

/** The status and message of anything a handler or middleware threw. */
/** The HTTP status `err` is answered with. */
export const statusOf = (err: unknown): number => describe(err).status;

function describe(err: unknown): { status: number; message: string } {
  if (isMailroomError(err)) return { status: STATUS_BY_KIND[err.kind], message: err.message };
  if (err instanceof HttpError) return { status: err.status, message: err.message };
  // http-errors from koa / raw-body / co-body: `expose` is true for 4xx client errors.
  const e = err as { status?: unknown; statusCode?: unknown; expose?: unknown; type?: unknown } | null;
  const status =
    typeof e?.status === 'number' ? e.status : typeof e?.statusCode === 'number' ? e.statusCode : 500;
  if (status === 413 || e?.type === 'entity.too.large') return { status: 413, message: BODY_TOO_LARGE };
  // co-body rethrows JSON.parse's SyntaxError with status 400.
  if (status === 400 && (err instanceof SyntaxError || e?.type === 'entity.parse.failed'))
    return {
      status: 400,
      message: (err as Error).message === BOURNE_PROTOTYPE ? PROTOTYPE_KEY : MALFORMED_JSON,
    };
  if (status === 415) return { status: 415, message: UNSUPPORTED_MEDIA_TYPE };
  if (status >= 400 && status < 500 && e?.expose) return { status, message: String((err as Error).message) };
  if (isDatabaseUnreachable(err)) return { status: 500, message: DATABASE_UNAVAILABLE };
  return { status: 500, message: INTERNAL_ERROR };
}
