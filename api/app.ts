import Koa from 'koa';
import { Router } from '@koa/router';
import { errorHandler } from './middleware/error-handler.ts';
import { httpMetrics, metricsEndpoint, metricsOnGatewayPort } from './middleware/metrics.ts';
import { requestLog } from './middleware/request-log.ts';
import { referenceRoutes } from './openapi/routes.ts';
import { mountRoutes, type RouteSpec } from './route.ts';
import { mountDevPages } from './routes/dev/index.ts';
import { emailRoutes } from './routes/email/index.ts';
import { healthRoutes } from './routes/health/health.ts';
import { keyRoutes } from './routes/keys/index.ts';
import { scheduleRoutes } from './routes/schedules/index.ts';
import { webhookRoutes } from './routes/webhooks/index.ts';
import { resolveWorkflowName, workflowRoutes } from './routes/workflow/index.ts';
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
 * The gateway: `GET /metrics` for scrapers when served on this port
 * (metricsOnGatewayPort; neither logged nor counted), then for every other
 * request one request log line, its metrics and one error shape, then the
 * routes, each with the request concerns it declares (body limit, content
 * type, identity; api/route.ts).
 */
export function createApp(deps: AppDeps): Koa<AppState> {
  const app = new Koa<AppState>();
  // X-Forwarded-For is believed only from TRUSTED_PROXIES (api/middleware/authenticate.ts).
  app.proxy = false;
  // Koa would print every error to stderr; errorHandler already logs what matters.
  app.silent = true;
  if (metricsOnGatewayPort(deps.config)) app.use(metricsEndpoint(deps.config.metricsToken));
  app.use(requestLog(deps.logger));
  app.use(httpMetrics());
  app.use(errorHandler(deps.logger));
  const router = new Router<AppState>();
  resolveWorkflowName(router);
  mountRoutes(router, ROUTES, deps);
  // The dev inbox and template gallery: only with DEV_INBOX_DIR (npm run dev's mail sink).
  mountDevPages(router, deps);
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
