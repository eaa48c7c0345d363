import type { IncomingMessage, ServerResponse } from 'node:http';
import { isMailroomError } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { RouteSpec } from '../route.ts';
import type { AccessSummary } from './access-summary.ts';
import { answersPerTurn } from './answers-per-turn.ts';
import { INTERNAL_ERROR, statusOf } from './error-handler.ts';
import type { httpMetricsRecorder } from './metrics.ts';
import { logLine, requestIdFor } from './request-log.ts';
import type { FastAnswer, FastAnswerer, FastRequest } from './tracking-fast-path-answers.ts';

/**
 * The tracking routes (the open pixel, tracked links) are answered in the
 * `node:http` request listener, before Koa's callback: they are hit once
 * per email opened or link followed, and as Koa middleware, even placed
 * first, each request still paid for Koa's context, the middleware dispatch
 * and Koa's general response handling, most of what such a request costs
 * (docs/benchmarks.md). Each request still gets everything the general path
 * gives it, done once here: its `X-Request-Id`, its count and time in the
 * HTTP metrics (labelled by the route's template, as the router would), its
 * place in the access summary (a line if it fails with a 5xx), the route's
 * own validation and answers (tracking-fast-path-answers.ts), and an error
 * answer in the shape of api/middleware/error-handler.ts. The answers of one
 * turn of the event loop are written together at its end (answers-per-turn.ts).
 *
 * Only the exact spellings are taken: `GET`/`HEAD` (the router serves `HEAD`
 * for every `GET`) of the path as declared, the parameter one non-empty
 * segment, decoded as the router decodes it, and a URL Koa would read by the
 * same simple split at `?` (parseurl's fast case). Anything else (another
 * case, a trailing slash, other methods, other paths) goes to Koa's callback
 * untouched, where the same routes stay mounted and answer it as before; the
 * OpenAPI document still lists them from the same declarations.
 */

/** How a tracking route is recognised and answered. */
export interface TrackingRoute {
  spec: RouteSpec;
  answer: FastAnswerer;
}

export type RequestListener = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/** A route as the listener matches it, with what it records, bound once. */
interface FastRoute {
  /** The route template: the metrics' `route` label. */
  template: string;
  /** The whole path (no parameter), or what comes before the one trailing `:param`. */
  fixed: string;
  hasParam: boolean;
  answer: FastAnswerer;
  /** The access summary's name of the route, by method. */
  summaryName: { GET: string; HEAD: string };
}

/**
 * Characters with which parseurl (Koa's `ctx.path`) leaves its fast split
 * for the legacy URL parser: such URLs go to Koa, so paths are read alike.
 */
const LEGACY_PARSED = /[\t\n\f\r #\u00a0\ufeff]/;

/** Wraps `next` (Koa's callback): the tracking routes' exact spellings are answered here, the rest by `next`. */
export function trackingFastPath(
  routes: readonly TrackingRoute[],
  deps: { logger: Logger; summary: AccessSummary; record: ReturnType<typeof httpMetricsRecorder> },
) {
  const fast = routes.map(fastRoute);
  const { logger, summary, record } = deps;
  const writeThisTurn = answersPerTurn();

  async function answerTracking(
    route: FastRoute,
    method: 'GET' | 'HEAD',
    request: FastRequest,
    res: ServerResponse,
  ): Promise<void> {
    const started = process.hrtime.bigint();
    const given = request.req.headers['x-request-id'];
    const requestId = requestIdFor(typeof given === 'string' ? given : undefined);
    let answer: FastAnswer;
    try {
      answer = await route.answer(request);
    } catch (err) {
      answer = failure(err, request.setBeforeFailure);
      if (answer.status >= 500) logger.error({ err, path: pathOf(request), method }, 'request failed');
    }
    writeThisTurn(() => {
      try {
        res.writeHead(answer.status, answer.headers.concat('X-Request-Id', requestId));
        // Node sends no body for HEAD, whatever end() is given; Content-Length stays as for GET.
        res.end(answer.body);
      } catch (err) {
        abandon(err, method, request, res);
        return;
      }
      record(method, route.template, answer.status, started);
      const ms = Math.round(Number(process.hrtime.bigint() - started) / 1e5) / 10;
      if (answer.status < 500) summary.add(route.summaryName[method], answer.status, ms);
      else logLine(logger, { requestId, method, path: pathOf(request), status: answer.status, ms });
    });
  }

  /** The answer could not be written (the socket is gone): nothing left to tell the caller. */
  function abandon(err: unknown, method: string, request: FastRequest, res: ServerResponse): void {
    logger.error({ err, method, path: pathOf(request) }, 'request failed');
    res.destroy();
  }

  return function withTrackingFirst(next: RequestListener): RequestListener {
    return function answerRequest(req, res) {
      const method = req.method;
      if (method !== 'GET' && method !== 'HEAD') return next(req, res);
      const url = req.url ?? '';
      if (LEGACY_PARSED.test(url)) return next(req, res);
      const mark = url.indexOf('?');
      const path = mark === -1 ? url : url.slice(0, mark);
      const match = matching(fast, path);
      if (!match) return next(req, res);
      const request: FastRequest = {
        req,
        query: mark === -1 ? '' : url.slice(mark + 1),
        param: match.param,
        setBeforeFailure: [],
      };
      return answerTracking(match.route, method, request, res).catch((err: unknown) =>
        abandon(err, method, request, res),
      );
    };
  };
}

/** The route `path` is, with its parameter (decoded); undefined for none. */
function matching(
  routes: readonly FastRoute[],
  path: string,
): { route: FastRoute; param: string } | undefined {
  for (const route of routes) {
    if (!route.hasParam) {
      if (path === route.fixed) return { route, param: '' };
      continue;
    }
    if (path.length <= route.fixed.length || !path.startsWith(route.fixed)) continue;
    if (path.indexOf('/', route.fixed.length) !== -1) continue;
    return { route, param: safeDecode(path.slice(route.fixed.length)) };
  }
  return undefined;
}

/** As @koa/router decodes a path parameter: percent-decoded, or as it came when that fails. */
function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The path of a request, for log lines: never its query (the pixel's view key is a secret). */
function pathOf({ req }: FastRequest): string {
  const url = req.url ?? '';
  const mark = url.indexOf('?');
  return mark === -1 ? url : url.slice(0, mark);
}

/** The error answer api/middleware/error-handler.ts gives for `err`: `{ success: false, error }`. */
function failure(err: unknown, setBefore: readonly string[]): FastAnswer {
  const status = statusOf(err);
  const mailroom = isMailroomError(err);
  const message = mailroom || status < 500 ? (err as Error).message : INTERNAL_ERROR;
  const body = Buffer.from(JSON.stringify({ success: false, error: message }));
  const headers = [...setBefore];
  if (mailroom && err.retryAfterSeconds !== undefined)
    headers.push('Retry-After', String(Math.max(1, Math.ceil(err.retryAfterSeconds))));
  headers.push('Content-Type', 'application/json; charset=utf-8', 'Content-Length', String(body.length));
  return { status, headers, body };
}

/**
 * A route's matching parts from its declaration. Only GET routes without
 * identity, body or around-middleware are taken: the fast path never skips
 * a check the route asked for.
 */
function fastRoute({ spec, answer }: TrackingRoute): FastRoute {
  if (spec.method !== 'get' || spec.auth || spec.body || spec.around)
    throw new Error(`${spec.path}: the fast path takes GET routes without auth, body or around only`);
  const param = /^(\/[^:]*\/):\w+$/.exec(spec.path);
  if (!param && spec.path.includes(':'))
    throw new Error(`${spec.path}: the fast path takes one trailing path parameter at most`);
  return {
    template: spec.path,
    fixed: param ? param[1]! : spec.path,
    hasParam: param !== null,
    answer,
    summaryName: { GET: `GET ${spec.path}`, HEAD: `HEAD ${spec.path}` },
  };
}
