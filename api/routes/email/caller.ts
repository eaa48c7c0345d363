import type { Context } from 'koa';
import { HttpError } from '../../errors.ts';

/** The identity headers as received; the email core decides whether they are required and well-formed. */
export { identityFromHeaders as callerFromHeaders } from '../../identity-headers.ts';

/**
 * POST bodies must be JSON. koa-bodyparser leaves other types unparsed (body
 * `{}`), which would surface as a confusing validation error; say what is wrong.
 * A request without a body (`is()` → null) falls through to validation.
 */
export function requireJson(ctx: Context): void {
  if (ctx.request.is('json') === false)
    throw new HttpError(415, 'unsupported content type. use application/json.');
}
