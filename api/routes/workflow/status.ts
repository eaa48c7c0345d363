import { ErrorResponseSchema } from '../../../core/email/schema.ts';
import { HttpError } from '../../http-error.ts';
import { defineRoute } from '../../route.ts';
import { describeRun, runIdFromQuery } from './find-run.ts';
import { viewRun } from './run-status.ts';
import { RunIdQuery, RunResponseSchema, WorkflowNameParams } from './schema.ts';
import { TEMPORAL_DEADLINE_MS, temporalError } from './temporal-errors.ts';

/** GET /api/workflow/:workflowName?runId=…: the run's status and outcome; poll every 1–2 s. */
export const statusRoute = defineRoute({
  method: 'get',
  path: '/api/workflow/:workflowName',
  operationId: 'getWorkflowRun',
  summary: "A run's status and outcome",
  tag: 'workflow',
  identity: 'memo-safe',
  params: WorkflowNameParams,
  query: RunIdQuery,
  responses: {
    200: { description: 'The run.', schema: RunResponseSchema },
    400: { description: 'No runId.', schema: ErrorResponseSchema },
    404: {
      description: 'Unknown workflow or run, or a run of another company.',
      schema: ErrorResponseSchema,
    },
    500: { description: 'Temporal could not be read.', schema: ErrorResponseSchema },
  },
  async handler(ctx, { temporal }) {
    const def = ctx.state.workflow;
    const runId = runIdFromQuery(ctx.query['runId']);
    const { handle, desc } = await describeRun(temporal, def, runId, ctx.state.caller);
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
      throw temporalError(err, 'read workflow run');
    }
  },
});
