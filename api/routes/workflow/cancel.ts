import { ErrorResponseSchema } from '../../../core/email/schema.ts';
import { RUN_ALREADY_CLOSED } from '../../../core/workflows/messages.ts';
import { HttpError } from '../../http-error.ts';
import { defineRoute } from '../../route.ts';
import { describeRun, runIdFromQuery } from './find-run.ts';
import { CancelResponseSchema, RunIdQuery, WorkflowNameParams } from './schema.ts';
import { TEMPORAL_DEADLINE_MS, temporalError } from './temporal-errors.ts';

/**
 * DELETE /api/workflow/:workflowName?runId=…: requests cancellation and
 * answers 202 `cancelling`; the run then ends `cancelled`. A run that already
 * finished cannot be cancelled: 409 `workflow run is already closed`.
 */
export const cancelRoute = defineRoute({
  method: 'delete',
  path: '/api/workflow/:workflowName',
  operationId: 'cancelWorkflowRun',
  summary: 'Request cancellation of a run',
  tag: 'workflow',
  identity: 'memo-safe',
  params: WorkflowNameParams,
  query: RunIdQuery,
  responses: {
    202: { description: 'Cancellation requested.', schema: CancelResponseSchema },
    400: { description: 'No runId.', schema: ErrorResponseSchema },
    404: {
      description: 'Unknown workflow or run, or a run of another company.',
      schema: ErrorResponseSchema,
    },
    409: { description: 'The run already closed.', schema: ErrorResponseSchema },
    500: { description: 'Temporal could not be reached.', schema: ErrorResponseSchema },
  },
  async handler(ctx, { temporal }) {
    const def = ctx.state.workflow;
    const runId = runIdFromQuery(ctx.query['runId']);
    const { handle, desc } = await describeRun(temporal, def, runId, ctx.state.caller);
    if (desc.status.name !== 'RUNNING') throw new HttpError(409, RUN_ALREADY_CLOSED);
    try {
      await temporal.withDeadline(Date.now() + TEMPORAL_DEADLINE_MS, () => handle.cancel());
    } catch (err) {
      throw temporalError(err, 'cancel workflow run');
    }
    ctx.status = 202;
    ctx.body = { success: true, runId, workflowName: def.name, status: 'cancelling' };
  },
});
