import type { IncomingMessage } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import accepts from 'accepts';
import encodeUrl from 'encodeurl';
import escapeHtml from 'escape-html';
import { describeBodyProblem } from '../../core/email/email-messages.ts';
import { parseStrings } from '../../core/validation.ts';
import { clickRoute } from '../routes/email/click.ts';
import { pixelRoute, TRACKING_PIXEL } from '../routes/email/track.ts';
import type { AppDeps } from '../types.ts';

/**
 * What the tracking routes' handlers (api/routes/email/track.ts, click.ts)
 * answer, written for the `node:http` listener (tracking-fast-path.ts)
 * instead of a Koa context: the same status, headers and bytes, which
 * api/middleware/tracking-fast-path.test.ts compares with the router's
 * answer to the same request. Validation uses the routes' own declared
 * schemas and words.
 */

/** One answer, but its `X-Request-Id`: headers as `[name, value, name, value, …]`. */
export interface FastAnswer {
  status: number;
  headers: string[];
  body: Buffer;
}

/** A tracking request as the listener matched it. */
export interface FastRequest {
  req: IncomingMessage;
  /** The query string, without its `?` ('' for none). */
  query: string;
  /** The path parameter, decoded as the router decodes it ('' for a route without one). */
  param: string;
  /**
   * Response headers set before a failure, as a handler's `ctx.set` leaves
   * them on its error answer; the listener adds them to that answer.
   */
  setBeforeFailure: string[];
}

export type FastAnswerer = (request: FastRequest) => Promise<FastAnswer>;

/** The pixel's answer is always these bytes: built once. */
const PIXEL_ANSWER: FastAnswer = {
  status: 200,
  headers: [
    'Cache-Control',
    'no-store, no-cache, must-revalidate',
    'Pragma',
    'no-cache',
    'Content-Type',
    'image/gif',
    'Content-Length',
    String(TRACKING_PIXEL.length),
  ],
  body: TRACKING_PIXEL,
};

/** GET /api/email/track: the open is buffered (never waits on the database), the GIF answered. */
export function pixelAnswerer({ email }: Pick<AppDeps, 'email'>): FastAnswerer {
  const schema = pixelRoute.query!;
  const describe = pixelRoute.describeProblem ?? describeBodyProblem;
  return async function answerPixel({ req, query }) {
    const valid = parseStrings(schema, queryValues(query), describe) as { view_key?: string };
    // A HEAD is a scanner's, not a reader's: the same answer, no open.
    if (req.method === 'GET') await email.recordOpen(valid.view_key);
    return PIXEL_ANSWER;
  };
}

const CLICK_HEADERS = ['Cache-Control', 'no-store'];

/** GET /api/email/click/{token}: a verified token's click buffered, then Koa's 302 to its URL. */
export function clickAnswerer({ email }: Pick<AppDeps, 'email'>): FastAnswerer {
  const schema = clickRoute.params!;
  const describe = clickRoute.describeProblem ?? describeBodyProblem;
  return async function answerClick({ req, param, setBeforeFailure }) {
    const valid = parseStrings(schema, { token: param }, describe) as { token: string };
    // The handler sets Cache-Control before following the token: its 400 carries it too.
    setBeforeFailure.push(...CLICK_HEADERS);
    const url = await email.followClick(valid.token, { count: req.method === 'GET' });
    return redirectAnswer(req, url);
  };
}

/**
 * Koa's `ctx.redirect(url)` (koa/lib/response.js): `Location` percent-encoded
 * by encodeurl, 302, and a short body naming the URL: HTML-escaped as
 * `text/html` when the caller accepts HTML (no `Accept` header does), else
 * `text/plain`. Koa also reserialises an http(s) URL with the WHATWG parser;
 * a click token's URL is already that parser's href (click-token.ts), which
 * reserialising leaves as it is, so it is not parsed again here.
 */
function redirectAnswer(req: IncomingMessage, target: string): FastAnswer {
  const acceptsHtml = req.headers.accept === undefined || accepts(req).type('html') !== false;
  const body = Buffer.from(`Redirecting to ${acceptsHtml ? escapeHtml(target) : target}.`);
  return {
    status: 302,
    headers: [
      ...CLICK_HEADERS,
      'Location',
      encodeUrl(target),
      'Content-Type',
      acceptsHtml ? 'text/html; charset=utf-8' : 'text/plain; charset=utf-8',
      'Content-Length',
      String(body.length),
    ],
    body,
  };
}

/** The query's fields as the route's validation sees them (Koa's `ctx.query`, a repeated field's first value). */
function queryValues(query: string): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  if (query === '') return values;
  for (const [name, value] of Object.entries(parseQuery(query)))
    values[name] = Array.isArray(value) ? value[0] : value;
  return values;
}
