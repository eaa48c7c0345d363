import Router from '@koa/router';
import type { AppDeps } from '../../app.ts';
import { triggerRoute } from './trigger.ts';
import { statusRoute } from './status.ts';
import { cancelRoute } from './cancel.ts';

/** POST (start), GET (status) and DELETE (cancel) /api/workflow/:workflowName. */
export function workflowRoutes(deps: AppDeps): Router {
  const router = new Router();
  triggerRoute(router, deps);
  statusRoute(router, deps);
  cancelRoute(router, deps);
  return router;
}
