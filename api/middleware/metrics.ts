import type { Context, Next } from 'koa';
import Koa from 'koa';
import { exposition, httpRequestDuration, httpRequests } from '../../core/metrics.ts';
import type { Config } from '../../core/config.ts';
import { METRICS_CHALLENGE, metricsAccess } from '../../core/metrics-token.ts';

/** The `route` label of a request no route matched: raw paths would mint a series per URL. */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * Counts and times every request by method, route template and final status
 * (mailroom_http_requests_total, mailroom_http_request_duration_seconds). The
 * route is the matched route's path template (`/api/workflow/:workflowName`),
 * never the raw URL, so ids and query strings never become label values.
 * Mounted outside the error handler, it sees the status the caller got.
 */
export function httpMetrics(record = httpMetricsRecorder()) {
  return async function recordHttpMetrics(ctx: Context, next: Next): Promise<void> {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const matched = (ctx as Context & { _matchedRoute?: string | RegExp })._matchedRoute;
      record(ctx.method, typeof matched === 'string' ? matched : UNMATCHED_ROUTE, ctx.status, started);
    }
  };
}

/**
 * Counts one finished request (started at `started`, hrtime) in the HTTP
 * metrics: what httpMetrics does per request, and the tracking routes' fast
 * path (tracking-fast-path.ts) calls directly.
 */
export function httpMetricsRecorder() {
  // One label set per method, route and status, bound once: prom-client's
  // labels() hashes the label values on every call, the bound child does not.
  // Looked up by nested maps, so a request builds no key string.
  const bound = new Map<string, Map<string, Map<number, BoundSeries>>>();
  let boundCount = 0;
  const MAX_BOUND = 2_000; // methods are caller text: past this, label sets are not kept
  function seriesOf(method: string, route: string, statusCode: number): BoundSeries {
    const known = bound.get(method)?.get(route)?.get(statusCode);
    if (known) return known;
    const status = String(statusCode);
    const series = {
      count: httpRequests.labels(method, route, status),
      time: httpRequestDuration.labels(method, route, status),
    };
    if (boundCount < MAX_BOUND) {
      let byRoute = bound.get(method);
      if (!byRoute) bound.set(method, (byRoute = new Map()));
      let byStatus = byRoute.get(route);
      if (!byStatus) byRoute.set(route, (byStatus = new Map()));
      byStatus.set(statusCode, series);
      boundCount++;
    }
    return series;
  }
  return function recordRequest(method: string, route: string, statusCode: number, started: bigint): void {
    const series = seriesOf(method, route, statusCode);
    series.count.inc();
    series.time.observe(Number(process.hrtime.bigint() - started) / 1e9);
  };
}

/** One label set's counter and histogram, bound. */
interface BoundSeries {
  count: { inc(): void };
  time: { observe(seconds: number): void };
}

export const METRICS_PATH = '/metrics';

/**
 * `GET /metrics`: the process's registry in Prometheus' text format
 * (core/metrics.ts), for scrapers. With METRICS_TOKEN set it needs
 * `Authorization: Bearer <token>` (401 otherwise); with METRICS_PORT set it is
 * served only on that port (metricsApp) instead of the gateway's.
 */
export function metricsEndpoint(token?: string) {
  const mayRead = metricsAccess(token);
  return async function serveMetrics(ctx: Context, next: Next): Promise<void> {
    if (ctx.path !== METRICS_PATH) return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      ctx.status = 405;
      ctx.set('Allow', 'GET, HEAD');
      return;
    }
    if (!mayRead(ctx.get('authorization'))) {
      ctx.status = 401;
      ctx.set('WWW-Authenticate', METRICS_CHALLENGE);
      ctx.body = { success: false, error: 'unauthorized' };
      return;
    }
    const { contentType, body } = await exposition();
    ctx.set('Cache-Control', 'no-store');
    ctx.type = contentType;
    ctx.body = body;
  };
}

/**
 * Whether the gateway's own port serves `GET /metrics`. With METRICS_PORT it
 * is served there instead. In AUTH_MODE=api-key (a gateway on a network) it
 * is served only to holders of METRICS_TOKEN: without one, the gateway's
 * `/metrics` is an unknown path (404), so request rates, routes and failures
 * are not public. Trusted-headers mode (behind an authenticating proxy, or
 * `npm run dev`) keeps serving it.
 */
export function metricsOnGatewayPort(
  config: Pick<Config, 'authMode' | 'metricsPort' | 'metricsToken'>,
): boolean {
  if (config.metricsPort !== undefined) return false;
  return config.authMode === 'trusted-headers' || config.metricsToken !== undefined;
}

/**
 * The start-up line about `/metrics` on the gateway's port, or undefined
 * when there is nothing to say (served on METRICS_PORT, or as configured).
 */
export function metricsStartupNotice(
  config: Pick<Config, 'authMode' | 'metricsPort' | 'metricsToken'>,
): string | undefined {
  if (config.metricsPort !== undefined || metricsOnGatewayPort(config)) return undefined;
  return (
    'GET /metrics is not served (404): in AUTH_MODE=api-key set METRICS_TOKEN (scrapers send it as a bearer token) ' +
    'or METRICS_PORT (a listener of its own, kept off the public network) to serve it.'
  );
}

/** The listener for METRICS_PORT: `/metrics` and nothing else (404). */
export function metricsApp(token?: string): Koa {
  const app = new Koa();
  app.silent = true;
  app.use(metricsEndpoint(token));
  return app;
}
