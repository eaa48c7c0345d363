import type { RouteSpec } from '../../route.ts';
import { cancelRoute } from './cancel.ts';
import { listRoute } from './list.ts';
import { statusRoute } from './status.ts';
import { triggerRoute } from './trigger.ts';

/** POST (start), GET (status) and DELETE (cancel) /api/workflow/:workflowName; GET …/runs (list). */
export const workflowRoutes: readonly RouteSpec[] = [triggerRoute, statusRoute, cancelRoute, listRoute];
