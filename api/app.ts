import Koa from 'koa';
import { Router } from '@koa/router';
import { errorHandler } from './middleware/error-handler.ts';
import { createAccessSummary } from './middleware/access-summary.ts';
import {
  httpMetrics,
  httpMetricsRecorder,
  metricsEndpoint,
  metricsOnGatewayPort,
} from './middleware/metrics.ts';
import { requestLog } from './middleware/request-log.ts';
import { requestDeadline } from './middleware/request-deadline.ts';
import { trackingFastPath, type RequestListener } from './middleware/tracking-fast-path.ts';
import { clickAnswerer, pixelAnswerer } from './middleware/tracking-fast-path-answers.ts';
import { referenceRoutes } from './openapi/routes.ts';
import { mountRoutes, type RouteSpec } from './route.ts';
import { mountDevPages } from './routes/dev/index.ts';
import { clickRoute } from './routes/email/click.ts';
import { emailRoutes } from './routes/email/index.ts';
import { pixelRoute } from './routes/email/track.ts';
import { healthRoutes } from './routes/health/health.ts';
import { keyRoutes } from './routes/keys/index.ts';
import { scheduleRoutes } from './routes/schedules/index.ts';
import { webhookRoutes } from './routes/webhooks/index.ts';
import { workflowRoutes } from './routes/workflow/index.ts';
import type { AppDeps, AppState } from './types.ts';

export type { AppDeps } from './types.ts';

/** Every endpoint of the gateway, in the order the API reference lists them. */
export const ROUTES: readonly RouteSpec[] = [
  ...emailRoutes,
  ...workflowRoutes,
  ...scheduleRoutes,
  ...webhookRoutes,
  ...keyRoutes,
  ...healthRoutes,
  // GET /openapi.json (generated from these routes) and GET /docs.
  ...referenceRoutes(() => ROUTES),
];

/**
 * The gateway: first the tracking routes (the open pixel and tracked links,
 * hit once per email opened or link followed), answered in the HTTP request
 * listener before Koa with the same metrics, logging and answers
 * (api/middleware/tracking-fast-path.ts; `app.callback()`, and so
 * `app.listen()`, include it); then, in Koa, `GET /metrics` for scrapers
 * when served on this port (metricsOnGatewayPort; neither logged nor
 * counted); then for every other request one request log line, its metrics
 * and one error shape, then the routes, each with the request concerns it
 * declares (body limit, content type, identity; api/route.ts).
 */
export function createApp(deps: AppDeps): Koa<AppState> {
  // One summary and one set of bound metric series for both paths to the tracking routes.
  const summary = createAccessSummary(deps.logger);
  const record = httpMetricsRecorder();
  const app = new Gateway(
    trackingFastPath(
      [
        { spec: pixelRoute, answer: pixelAnswerer(deps) },
        { spec: clickRoute, answer: clickAnswerer(deps) },
      ],
      { logger: deps.logger, summary, record },
    ),
  );
  // X-Forwarded-For is believed only from TRUSTED_PROXIES (api/middleware/authenticate.ts).
  app.proxy = false;
  // Koa would print every error to stderr; errorHandler already logs what matters.
  app.silent = true;
  if (metricsOnGatewayPort(deps.config)) app.use(metricsEndpoint(deps.config.metricsToken));
  app.use(requestLog(deps.logger, summary));
  app.use(httpMetrics(record));
  app.use(errorHandler(deps.logger));
  // No route waits on the database or Temporal for ever (the dev inbox's event stream is long by design).
  app.use(requestDeadline(deps.config.requestDeadlineMs, ['/dev/']));
  const router = new Router<AppState>();
  mountRoutes(router, ROUTES, deps);
  // The dev inbox and template gallery: only with DEV_INBOX_DIR (npm run dev's mail sink).
  mountDevPages(router, deps);
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

/** Koa whose request listener puts `first` ahead of Koa's own (the tracking routes). */
class Gateway extends Koa<AppState> {
  constructor(private readonly first: (next: RequestListener) => RequestListener) {
    super();
  }

  override callback(): ReturnType<Koa['callback']> {
    // Koa's listener also types HTTP/2 requests; this gateway serves HTTP/1.1 only (app.listen).
    return this.first(super.callback()) as ReturnType<Koa['callback']>;
  }
}
