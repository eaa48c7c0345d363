import Router from '@koa/router';
import type { AppDeps } from '../../app.ts';
import { bulkRoute } from './bulk.ts';
import { sendRoute } from './send.ts';
import { statusRoute } from './status.ts';
import { trackRoutes } from './track.ts';
import { webhookRoute } from './webhook.ts';

/** The email endpoints: thin adapters from HTTP to the email core (core/email/service.ts). */
export function emailRoutes(deps: AppDeps): Router {
  const router = new Router();
  sendRoute(router, deps);
  bulkRoute(router, deps);
  statusRoute(router, deps);
  trackRoutes(router, deps);
  webhookRoute(router, deps);
  return router;
}
