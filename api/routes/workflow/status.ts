import type Router from '@koa/router';
import type { AppDeps } from '../../app.ts';
import { HttpError } from '../../errors.ts';
import { workflowFromPath } from './trigger.ts';
import { callerFromHeaders } from './caller.ts';
import { viewRun } from './run-status.ts';
import { describeRun, runIdFromQuery } from './find-run.ts';
import { TEMPORAL_DEADLINE_MS, temporalError } from './temporal-errors.ts';

/** GET /api/workflow/:workflowName?runId=… — the run's status and outcome; poll every 1–2 s. */
export function statusRoute(router: Router, { temporal }: AppDeps): void {
  router.get('/api/workflow/:workflowName', async (ctx) => {
    const def = workflowFromPath(ctx.params['workflowName'] ?? '');
    const runId = runIdFromQuery(ctx.query['runId']);
    const { handle, desc } = await describeRun(temporal, def, runId, callerFromHeaders(ctx));
    try {
      const view = await temporal.withDeadline(Date.now() + TEMPORAL_DEADLINE_MS, async () => {
        // Only a running run needs its history (pending vs running, latest progress);
        // a closed one is described by its close time and close event (handle.result()).
        const events = desc.status.name === 'RUNNING' ? ((await handle.fetchHistory()).events ?? []) : [];
        return viewRun(handle, desc, events);
      });
      ctx.body = { success: true, runId, workflowName: def.name, ...view };
    } catch (err) {
      if (err instanceof HttpError) throw err;
      throw temporalError(err, 'failed to read workflow run');
    }
  });
}
