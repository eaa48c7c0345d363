import type Router from '@koa/router';
import type { AppDeps } from '../../app.ts';
import { HttpError } from '../../errors.ts';
import { workflowFromPath } from './trigger.ts';
import { callerFromHeaders } from './caller.ts';
import { describeRun, runIdFromQuery } from './find-run.ts';
import { TEMPORAL_DEADLINE_MS, temporalError } from './temporal-errors.ts';

/**
 * DELETE /api/workflow/:workflowName?runId=… — requests cancellation and
 * answers 202 `cancelling`; the run then ends `cancelled`. A run that already
 * finished cannot be cancelled: 409 `workflow run is already closed`.
 */
export function cancelRoute(router: Router, { temporal }: AppDeps): void {
  router.delete('/api/workflow/:workflowName', async (ctx) => {
    const def = workflowFromPath(ctx.params['workflowName'] ?? '');
    const runId = runIdFromQuery(ctx.query['runId']);
    const { handle, desc } = await describeRun(temporal, def, runId, callerFromHeaders(ctx));
    if (desc.status.name !== 'RUNNING') throw new HttpError(409, 'workflow run is already closed');
    try {
      await temporal.withDeadline(Date.now() + TEMPORAL_DEADLINE_MS, () => handle.cancel());
    } catch (err) {
      throw temporalError(err, 'failed to cancel workflow run');
    }
    ctx.status = 202;
    ctx.body = { success: true, runId, workflowName: def.name, status: 'cancelling' };
  });
}
