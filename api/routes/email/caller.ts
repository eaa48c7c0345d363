import type { Context } from 'koa';
import type { Caller } from '../../../core/email/contract.ts';
import { HttpError } from '../../errors.ts';

/**
 * The identity headers as received. The email core decides whether they are
 * required and well-formed (UUIDs); the routes only copy them.
 */
export function callerFromHeaders(ctx: Context): Caller {
  const value = (name: string) => ctx.get(name).trim() || undefined;
  return {
    companyId: value('x-company-id'),
    organizationId: value('x-organization-id'),
    userId: value('x-user-id'),
  };
}

/**
 * POST bodies must be JSON. koa-bodyparser leaves other types unparsed (body
 * `{}`), which would surface as a confusing validation error; say what is wrong.
 * A request without a body (`is()` → null) falls through to validation.
 */
export function requireJson(ctx: Context): void {
  if (ctx.request.is('json') === false)
    throw new HttpError(415, 'unsupported content type. use application/json.');
}
