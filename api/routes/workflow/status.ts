import { HttpError } from '../../http-error.ts';
import { defineRoute, failure } from '../../route.ts';
import { findRun, RUN_LOOKUP_FAILURES, RUN_ROUTE } from './find-run.ts';
import { runningHistory } from './run-history.ts';
import { viewRun } from './run-status.ts';
import { WORKFLOW_AUTH } from './owner.ts';
import { RunResponseSchema } from './schema.ts';
import { TEMPORAL_DEADLINE_MS, temporalError } from './temporal-errors.ts';

/** GET /api/workflow/:workflowName?runId=…: the run's status and outcome; poll every 1–2 s. */
export const statusRoute = defineRoute({
  method: 'get',
  path: '/api/workflow/:workflowName',
  operationId: 'getWorkflowRun',
  summary: "A run's status and outcome",
  ...RUN_ROUTE,
  auth: WORKFLOW_AUTH.read,
  responses: {
    200: { description: 'The run.', schema: RunResponseSchema },
    ...RUN_LOOKUP_FAILURES,
    403: failure('The API key lacks the workflows:read scope.'),
    500: failure('Temporal could not be read.'),
  },
  async handler(ctx, { temporal }) {
    const { def, runId, handle, desc } = await findRun(ctx, temporal);
    try {
      const view = await temporal.withDeadline(Date.now() + TEMPORAL_DEADLINE_MS, async () => {
        // Only a running run needs (a few events of) its history: pending vs running,
        // latest progress (run-history.ts). A closed one is described by its close
        // time and close event (handle.result()).
        const events = desc.status.name === 'RUNNING' ? await runningHistory(temporal, desc) : [];
        return viewRun(handle, desc, events);
      });
      ctx.body = { success: true, runId, workflowName: def.name, ...view };
    } catch (err) {
      if (err instanceof HttpError) throw err;
      throw temporalError(err, 'read workflow run');
    }
  },
});
