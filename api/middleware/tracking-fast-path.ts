import type { TObject } from '@sinclair/typebox';
import type { Context, Next } from 'koa';
import { describeBodyProblem } from '../../core/email/email-messages.ts';
import type { RouteContext, RouteSpec } from '../route.ts';
import type { AppDeps } from '../types.ts';
import { errorHandler } from './error-handler.ts';
import type { httpMetricsRecorder } from './metrics.ts';
import { assignRequestId, type accessLog } from './request-log.ts';
import { validateRequest } from './request-validation.ts';

/** A route the fast path answers, and how its path is recognised. */
interface FastRoute {
  spec: RouteSpec;
  /** The whole path (no parameter), or what comes before the one trailing `:param`. */
  fixed: string;
  /** The trailing parameter's name, when the path has one. */
  param?: string;
  run(ctx: Context): Promise<void>;
}

/**
 * The tracking routes (the open pixel, tracked links) answered first, before
 * the request log, the general metrics middleware, the error handler and the
 * router: they are hit once per email opened or link followed, and that
 * general handling cost them most of their throughput (docs/benchmarks.md).
 * Each request still gets everything the general path gives it, done once
 * here instead of by a chain of middleware: its `X-Request-Id`, its count
 * and time in the HTTP metrics (labelled by the route's template, as the
 * router would), its place in the access summary (a line if it fails with a
 * 5xx), the route's own validation, handler and error answers.
 *
 * Only the exact spellings are taken: `GET`/`HEAD` (the router serves `HEAD`
 * for every `GET`) of the path as declared, the parameter one non-empty
 * segment, decoded as the router decodes it. Anything else (another case, a
 * trailing slash, other methods) goes on to the general chain, where the
 * same routes stay mounted and answer it as before; the OpenAPI document
 * still lists them from the same declarations.
 */
export function trackingFastPath(
  specs: readonly RouteSpec[],
  deps: AppDeps,
  log: ReturnType<typeof accessLog>,
  record: ReturnType<typeof httpMetricsRecorder>,
) {
  const routes = specs.map((spec) => fastRoute(spec, deps));
  return async function answerTracking(ctx: Context, next: Next): Promise<void> {
    const method = ctx.method;
    if (method !== 'GET' && method !== 'HEAD') return next();
    const route = matching(routes, ctx);
    if (!route) return next();
    const started = process.hrtime.bigint();
    const requestId = assignRequestId(ctx);
    (ctx as Context & { _matchedRoute: string })._matchedRoute = route.spec.path;
    try {
      await route.run(ctx);
    } finally {
      record(method, route.spec.path, ctx.status, started);
      log(ctx, requestId, started);
    }
  };
}

/** The route `ctx`'s path is, with its parameter set on `ctx.params`; undefined for none. */
function matching(routes: readonly FastRoute[], ctx: Context): FastRoute | undefined {
  const path = ctx.path;
  for (const route of routes) {
    if (route.param === undefined) {
      if (path === route.fixed) return route;
      continue;
    }
    if (path.length <= route.fixed.length || !path.startsWith(route.fixed)) continue;
    const value = path.slice(route.fixed.length);
    if (value.includes('/')) continue;
    (ctx as Context & { params: Record<string, string> }).params = { [route.param]: safeDecode(value) };
    return route;
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

/**
 * A route's chain as mountRoutes builds it for a route with no identity and
 * no body (api/route.ts), inside the error handler: validation, then the
 * handler. A route that declares either is refused at start, so the fast
 * path never skips a check the route asked for.
 */
function fastRoute(spec: RouteSpec, deps: AppDeps): FastRoute {
  if (spec.method !== 'get' || spec.auth || spec.body || spec.around)
    throw new Error(`${spec.path}: the fast path takes GET routes without auth, body or around only`);
  const param = /^(\/[^:]*\/):(\w+)$/.exec(spec.path);
  if (!param && spec.path.includes(':'))
    throw new Error(`${spec.path}: the fast path takes one trailing path parameter at most`);
  const handleErrors = errorHandler(deps.logger);
  const validate = validateRequest(spec, spec.describeProblem ?? describeBodyProblem);
  const handle = (ctx: Context) =>
    spec.handler(ctx as unknown as RouteContext<TObject, TObject, TObject>, deps);
  return {
    spec,
    fixed: param ? param[1]! : spec.path,
    ...(param ? { param: param[2]! } : {}),
    run: (ctx) => handleErrors(ctx, () => validate(ctx, async () => handle(ctx))),
  };
}
