import { findWorkflow } from '../../../core/workflows/registry.ts';
import { workflowNotFound } from '../../../core/workflows/workflow-messages.ts';
import { HttpError } from '../../http-error.ts';
import type { RouteSpec } from '../../route.ts';
import type { AppRouter } from '../../types.ts';
import { cancelRoute } from './cancel.ts';
import { listRoute } from './list.ts';
import { statusRoute } from './status.ts';
import { triggerRoute } from './trigger.ts';

/** POST (start), GET (status) and DELETE (cancel) /api/workflow/:workflowName; GET …/runs (list). */
export const workflowRoutes: readonly RouteSpec[] = [triggerRoute, statusRoute, cancelRoute, listRoute];

/**
 * Resolves `:workflowName` in the registry for every workflow route, before
 * any other route middleware: an unknown name is 404 naming it.
 */
export function resolveWorkflowName(router: AppRouter): void {
  router.param('workflowName', async (name, ctx, next) => {
    const def = findWorkflow(name);
    if (!def) throw new HttpError(404, workflowNotFound(name));
    ctx.state.workflow = def;
    await next();
  });
}
