import type { Context, Next } from 'koa';
import { MailroomError } from '../../core/errors.ts';
import { HttpError } from '../http-error.ts';
import { BODY_NOT_RECEIVED } from './body-stream.ts';

/** The 503 a request gets when its handler is still waiting at its deadline. */
export const REQUEST_DEADLINE_PASSED =
  'service unavailable: the request did not finish in time (database or Temporal not answering). ' +
  'Retry later; a send or trigger with an Idempotency-Key is safe to retry with the same key.';

/** Seconds a client is told to wait before retrying (HTTP `Retry-After`). */
const RETRY_AFTER_SECONDS = 5;

/**
 * A deadline for every request the routes handle: a handler still waiting at
 * `deadlineMs` (a database or Temporal that stopped answering holds its
 * promise forever; the MongoDB driver has no per-operation timeout by
 * default) is answered 503 `{ success: false, error }` instead of leaving the
 * socket open. The handler is not cancelled: it may still finish (a send may
 * still go out), which is why the answer points at the Idempotency-Key.
 * Paths under `exempt` (the dev inbox's event stream) are long by design.
 * A request whose body has still not all arrived is the client's doing, not
 * the servers': it gets 408 instead (body-stream.ts bounds that time too).
 */
export function requestDeadline(deadlineMs: number, exempt: readonly string[] = []) {
  return async function withDeadline(ctx: Context, next: Next): Promise<void> {
    if (exempt.some((prefix) => ctx.path.startsWith(prefix))) return next();
    let timer: NodeJS.Timeout | undefined;
    const handled = next();
    // The handler's own outcome after the deadline has nobody to go to.
    handled.catch(() => undefined);
    const passed = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            ctx.req.complete
              ? new MailroomError('unavailable', REQUEST_DEADLINE_PASSED, {
                  retryAfterSeconds: RETRY_AFTER_SECONDS,
                })
              : new HttpError(408, BODY_NOT_RECEIVED),
          ),
        deadlineMs,
      );
    });
    try {
      await Promise.race([handled, passed]);
    } finally {
      clearTimeout(timer);
    }
  };
}
