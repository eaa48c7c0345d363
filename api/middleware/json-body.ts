import bodyParser from 'koa-bodyparser';
import type { IncomingMessage } from 'node:http';
import type { Middleware } from 'koa';
import { HttpError, UNSUPPORTED_MEDIA_TYPE } from '../http-error.ts';
import type { AppState } from '../types.ts';
import { clientNetwork } from '../../core/email/signup/index.ts';
import type { BodyAccount, BodyBudget } from './body-budget.ts';
import { boundedBody, type BodyBounds } from './body-stream.ts';
import { MAX_JSON_ARRAY_ITEMS, MAX_JSON_DEPTH, MAX_JSON_VALUES } from './json-shape.ts';

/**
 * The most a caller who has not proven who they are may send on a route that
 * admits them (send: the signup templates need a few KB), whatever the
 * route's own limit. Such a body is never read, nor decompressed, past it.
 */
export const ANONYMOUS_BODY_LIMIT = '64kb';

/** What a route declares about its body (RouteSpec `body`). */
export interface BodyLimits {
  /** Largest body, decoded: `16kb`, `45mb` (1024-based, as koa-bodyparser reads it). */
  limit: string;
  /**
   * The body is signed by its sender over its exact bytes (SendGrid's
   * webhook): the handler gets the text unparsed (`ctx.request.rawBody`) and
   * parses it only once the signature holds, so an unsigned body costs no
   * parse. Its nesting is bounded while it is read; its value and array item
   * counts are not (SendGrid's batches are large, and only a verified one is parsed). Not
   * decompressed: the sender never compresses, and nobody unproven gets a
   * body inflated.
   */
  signed?: boolean;
  /**
   * A field's own message for an array past the parser's item bound
   * (MAX_JSON_ARRAY_ITEMS), by key: the route's limit in its own words.
   */
  arrayMessages?: Readonly<Record<string, string>>;
}

/** `16kb` → 16384. */
export function bytesOf(limit: string): number {
  const match = /^(\d+)(kb|mb)$/i.exec(limit);
  if (!match) throw new Error(`body limit must be <n>kb or <n>mb: ${limit}`);
  return Number(match[1]) * (match[2]!.toLowerCase() === 'kb' ? 1024 : 1024 * 1024);
}

/** How every body of one gateway is read: its time to arrive and the room all of them share. */
export interface BodyReading {
  receiveMs: number;
  budget: BodyBudget;
  /**
   * The client's address: behind TRUSTED_PROXIES the one they forwarded, as
   * authentication reads it, so the callers of a public route behind a proxy
   * are counted by their own networks, not all as the proxy's.
   */
  clientIp: (req: IncomingMessage) => string;
}

/**
 * A route's JSON body, read after the caller was authenticated: up to the
 * route's limit for a proven caller, ANONYMOUS_BODY_LIMIT for anyone else;
 * decoded (gzip, deflate, br), shape-checked, timed and counted against the
 * gateway's room for bodies (its company's share, or for a caller without
 * credentials the room they share: bodyAccount) while it streams in
 * (body-stream.ts, json-shape.ts, body-budget.ts), then parsed by
 * koa-bodyparser; its room is given back once the answer has gone. Other
 * content types are refused with 415: the parser would leave them unparsed,
 * which would surface as a confusing validation error. A request without a
 * body falls through to the route's validation.
 */
export function jsonBody(
  body: BodyLimits,
  { receiveMs, budget, clientIp }: BodyReading,
): Middleware<AppState>[] {
  const routeLimit = bytesOf(body.limit);
  const anonymousLimit = Math.min(routeLimit, bytesOf(ANONYMOUS_BODY_LIMIT));
  const onerror = (err: Error) => {
    throw err;
  };
  const parse = body.signed
    ? bodyParser({
        enableTypes: ['text'],
        extendTypes: { text: ['application/json'] },
        textLimit: body.limit,
        onerror,
      })
    : // Not strict: `null` or `"x"` is JSON, just not an object, which the
      // route's validation says (`request body must be a JSON object.`).
      bodyParser({ enableTypes: ['json'], jsonLimit: body.limit, strict: false, onerror });

  const requireJson: Middleware<AppState> = async (ctx, next) => {
    if (ctx.request.is('json') === false) throw new HttpError(415, UNSUPPORTED_MEDIA_TYPE);
    await next();
  };
  const read: Middleware<AppState> = async (ctx, next) => {
    // Public routes have no principal: their own (small, or signed) limit holds.
    const principal = ctx.state.principal as AppState['principal'] | undefined;
    const anonymous = principal?.authenticated === false;
    const account = bodyAccount(budget, principal, principal?.clientIp ?? clientIp(ctx.req));
    ctx.res.once('close', () => account.release());
    const bounds: BodyBounds = {
      limit: anonymous ? anonymousLimit : routeLimit,
      maxDepth: MAX_JSON_DEPTH,
      maxValues: body.signed ? Infinity : MAX_JSON_VALUES,
      maxItems: body.signed ? Infinity : MAX_JSON_ARRAY_ITEMS,
      ...(body.arrayMessages ? { arrayMessages: body.arrayMessages } : {}),
      compressed: !body.signed,
      receiveMs,
      account,
    };
    // koa-bodyparser (co-body) reads the body from `ctx.req`: it parses a view
    // of the context whose `req` is the bounded, decoded stream in front of the
    // request (and whose `request` is the context's own, where the body lands).
    // The context itself keeps its request: the error handler and the deadline
    // look at its socket and whether it all arrived, even mid-parse.
    const view = Object.create(ctx, {
      req: { value: boundedBody(ctx.req, bounds) },
    }) as typeof ctx;
    await parse(view, async () => undefined);
    await next();
  };
  return [requireJson, read];
}

/**
 * Where a request's body is counted (body-budget.ts): a proven caller's in
 * key holders' room, as its key's company, the company it names (trusted
 * headers), or else its client's network; anyone else's (no key, incomplete
 * trusted headers, a public route) in the room callers without credentials
 * share, as its client's network, whatever company it names.
 */
function bodyAccount(
  budget: BodyBudget,
  principal: AppState['principal'] | undefined,
  ip: string,
): BodyAccount {
  const network = clientNetwork(ip);
  if (!principal?.authenticated) return budget.anonymous.open(network);
  const company = principal.keyCompanyId ?? principal.caller.companyId?.trim().toLowerCase();
  return budget.companies.open(company ? `company:${company}` : `client:${network}`);
}
