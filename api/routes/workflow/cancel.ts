import { RUN_ALREADY_CLOSED } from '../../../core/workflows/workflow-messages.ts';
import { HttpError } from '../../http-error.ts';
import { defineRoute, failure } from '../../route.ts';
import { findRun, RUN_LOOKUP_FAILURES, RUN_ROUTE } from './find-run.ts';
import { WORKFLOW_ACCESS } from './owner.ts';
import { runningHistory } from './run-history.ts';
import { CancelResponseSchema } from './run-schema.ts';
import { mapStatus } from './run-status.ts';
import { withinDeadline } from '../../temporal-deadlines.ts';
import { temporalError } from './temporal-errors.ts';

/**
 * DELETE /api/workflow/:workflowName?runId=…: requests cancellation and
 * answers 202 with the run's status as it is (`pending` or `running`: no
 * status outside the interface's five) and `cancelRequested: true`, as GET
 * shows it until the run ends (usually `cancelled`; one that finishes first,
 * `completed`). A run that already finished cannot be cancelled: 409
 * `workflow run is already closed`.
 */
export const cancelRoute = defineRoute({
  method: 'delete',
  path: '/api/workflow/:workflowName',
  operationId: 'cancelWorkflowRun',
  summary: 'Request cancellation of a run',
  ...RUN_ROUTE,
  ...WORKFLOW_ACCESS.cancel,
  responses: {
    202: { description: 'Cancellation requested.', schema: CancelResponseSchema },
    ...RUN_LOOKUP_FAILURES,
    403: failure('The API key lacks the workflows:cancel scope.'),
    409: failure('The run already closed.', [RUN_ALREADY_CLOSED]),
    500: failure('Temporal could not be reached.'),
  },
  async handler(ctx, { temporal }) {
    const { def, runId, handle, desc } = await findRun(ctx, temporal, 'cancel workflow run');
    if (desc.status.name !== 'RUNNING') throw new HttpError(409, RUN_ALREADY_CLOSED);
    const status = await withinDeadline(async () => {
      await handle.cancel();
      // Pending or running: whether a worker has started it (the history's first events).
      return mapStatus(desc.status.name, await runningHistory(temporal, desc));
    }).catch((err: unknown) => {
      throw temporalError(err, 'cancel workflow run');
    });
    ctx.status = 202;
    ctx.body = { success: true, runId, workflowName: def.name, status, cancelRequested: true };
  },
});
