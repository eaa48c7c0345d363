import { findWorkflow } from '../../../core/workflows/registry.ts';
import { workflowNotFound } from '../../../core/workflows/workflow-messages.ts';
import { HttpError } from '../../http-error.ts';
import type { AppMiddleware } from '../../types.ts';

/**
 * The workflow a route under `/api/workflow/:workflowName` acts on, from the
 * registry, on `ctx.state.workflow`; an unknown name is 404 naming it. A
 * route's `resolve`: it runs once the caller is proven, so a caller without
 * a valid key is 401 whatever the name.
 */
export const workflowByName: AppMiddleware = async (ctx, next) => {
  const name = String(ctx.params['workflowName'] ?? '');
  const def = findWorkflow(name);
  if (!def) throw new HttpError(404, workflowNotFound(name));
  ctx.state.workflow = def;
  await next();
};
