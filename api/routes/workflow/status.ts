import { HttpError } from '../../http-error.ts';
import { describeRunStatusProblem } from '../../../core/workflows/workflow-messages.ts';
import { defineRoute, failure } from '../../route.ts';
import { findRun, RUN_LOOKUP_FAILURES, RUN_ROUTE } from './find-run.ts';
import { runningHistory } from './run-history.ts';
import { viewRun } from './run-status.ts';
import { WORKFLOW_ACCESS } from './owner.ts';
import { RunResponseSchema, RunStatusQuery } from './run-schema.ts';
import { withinDeadline } from '../../temporal-deadlines.ts';
import { temporalError } from './temporal-errors.ts';
import { CLIENT_CLOSED_REQUEST, waitFromQuery, waitForClose, waitSlots } from './wait-for-close.ts';
import { RUN_ID_REQUIRED, RUN_ID_TOO_LONG, WAIT_INVALID } from '../../../core/workflows/workflow-messages.ts';

/**
 * GET /api/workflow/:workflowName?runId=…[&wait=<seconds>]: the run's status
 * and outcome. With `wait`, a run still pending or running is answered once it
 * ends (a reset one once its new execution ends), or as it is when the wait is
 * over (wait-for-close.ts).
 */
export const statusRoute = defineRoute({
  method: 'get',
  path: '/api/workflow/:workflowName',
  operationId: 'getWorkflowRun',
  summary: "A run's status and outcome",
  ...RUN_ROUTE,
  query: RunStatusQuery,
  describeProblem: describeRunStatusProblem,
  ...WORKFLOW_ACCESS.read,
  responses: {
    200: {
      description: 'The run (with `wait`: once it ended, or as it is when the wait is over).',
      schema: RunResponseSchema,
    },
    ...RUN_LOOKUP_FAILURES,
    400: failure('No runId, one longer than 255 characters, or a wait other than 1 to 60 seconds.', [
      RUN_ID_REQUIRED,
      RUN_ID_TOO_LONG,
      WAIT_INVALID,
    ]),
    403: failure('The API key lacks the workflows:read scope.'),
    500: failure('Temporal could not be read.'),
  },
  async handler(ctx, { temporal, config }) {
    const wait = waitFromQuery(ctx.query['wait']);
    const found = await findRun(ctx, temporal);
    const { def, runId, handle } = found;
    let { desc } = found;
    // Past the company's open waits (WORKFLOW_WAITS_PER_COMPANY), answered at once.
    const slot =
      wait !== undefined && desc.status.name === 'RUNNING'
        ? waitSlots(config).take(ctx.state.company.companyId)
        : undefined;
    if (wait !== undefined && slot) {
      try {
        await waitForClose(ctx, temporal, { workflowId: desc.workflowId, runId: desc.runId }, wait);
      } finally {
        slot();
      }
      if (ctx.req.destroyed) {
        // The client went away: nobody to answer. Logged and counted as nginx's 499
        // (client closed request), not as Koa's default 404 ("run not found").
        ctx.status = CLIENT_CLOSED_REQUEST;
        return;
      }
      desc = await withinDeadline(() => handle.describe()).catch((err: unknown) => {
        throw temporalError(err, 'read workflow run');
      });
    }
    try {
      const view = await withinDeadline(async () => {
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
