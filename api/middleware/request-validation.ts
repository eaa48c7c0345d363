import type { TObject, TSchema } from '@sinclair/typebox';
import type { Context, Next } from 'koa';
import { describeBodyProblem } from '../../core/email/email-messages.ts';
import { parse, parseStrings, type DescribeProblem } from '../../core/validation.ts';

/** The parts of a route's declaration this middleware enforces (api/route.ts). */
interface Declared {
  params?: TObject | undefined;
  query?: TObject | undefined;
  headers?: TObject | undefined;
  body?: { schema: TSchema; validate?: boolean; describeProblem?: DescribeProblem } | undefined;
}

/**
 * Validates a request's path parameters, query and headers against the
 * route's schemas with the one validator, coercing their strings to the
 * declared types (`?limit=10` → 10), and leaves them on `ctx.valid` for the
 * handler; a problem is 400 in the route's words.
 *
 * A query field sent twice counts once, its first value (unless its schema
 * is an array). A header is read only if declared; one sent empty is
 * checked as the empty string (an empty `Idempotency-Key` is 400, not "no key").
 *
 * A body is checked here only when its route says so (`body.validate`),
 * in its route's words (`body.describeProblem`) or the email interface's;
 * the others are the core's to check, after it has authorised the caller.
 */
export function validateRequest(spec: Declared, describe: DescribeProblem) {
  const check = (schema: TObject | undefined, value: Record<string, unknown>) =>
    schema ? parseStrings(schema, value, describe) : value;
  return async function validateRequestParts(
    ctx: Context & { params?: Record<string, string> },
    next: Next,
  ): Promise<void> {
    (ctx as Context & { valid: unknown }).valid = {
      params: check(spec.params, { ...ctx.params }),
      query: check(spec.query, queryOf(ctx, spec.query)),
      headers: check(spec.headers, headersOf(ctx, spec.headers)),
    };
    if (spec.body?.validate)
      parse(spec.body.schema, ctx.request.body, spec.body.describeProblem ?? describeBodyProblem);
    await next();
  };
}

function queryOf(ctx: Context, schema: TObject | undefined): Record<string, unknown> {
  const query: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(ctx.query)) {
    const wantsArray = (schema?.properties[name] as { type?: unknown } | undefined)?.type === 'array';
    query[name] = Array.isArray(value) && !wantsArray ? value[0] : value;
  }
  return query;
}

function headersOf(ctx: Context, schema: TObject | undefined): Record<string, unknown> {
  const headers: Record<string, unknown> = {};
  for (const name of Object.keys(schema?.properties ?? {})) {
    // Sent empty is not absent: an empty `Idempotency-Key` is a broken client, told so.
    const sent = ctx.req.headersDistinct[name];
    if (sent === undefined) continue;
    // Sent twice is not one value: Node would join them with ", " into a key nobody sent.
    // As an array it fails the route's string schema, and the caller gets the route's 400.
    headers[name] = sent.length === 1 ? sent[0] : sent;
  }
  return headers;
}
