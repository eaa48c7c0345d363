import bodyParser from 'koa-bodyparser';
import type { Middleware } from 'koa';
import { HttpError } from '../http-error.ts';

export const UNSUPPORTED_MEDIA_TYPE = 'unsupported content type. use application/json.';

/**
 * A route's JSON body, parsed up to `limit` (over it → 413). Other content
 * types are refused with 415: the parser would leave them unparsed, which
 * would surface as a confusing validation error. A request without a body
 * falls through to the route's validation.
 *
 * Per route, not global: each route takes exactly the body it can use.
 */
export function jsonBody(limit: string): Middleware[] {
  const parse = bodyParser({
    enableTypes: ['json'],
    jsonLimit: limit,
    strict: true,
    onerror: (err) => {
      throw err;
    },
  });
  const requireJson: Middleware = async (ctx, next) => {
    if (ctx.request.is('json') === false) throw new HttpError(415, UNSUPPORTED_MEDIA_TYPE);
    await next();
  };
  return [requireJson, parse];
}
