import type { Client } from '@temporalio/client';
import { HttpError } from '../../http-error.ts';
import { defineRoute, failure } from '../../route.ts';
import type { WorkflowDefinition } from '../../../core/workflows/definition.ts';
import { tooManySchedules } from '../../../core/workflows/workflow-messages.ts';
import { validateWorkflowInput } from '../../../core/workflows/validate-input.ts';
import { COMPANY_ID } from '../../../core/workflows/search-attributes.ts';
import { CALLER_MEMO_KEY } from '../../../core/identity.ts';
import { WORKFLOW_ACCESS, WORKFLOW_AUTH_FAILURES, reachOf } from '../workflow/owner.ts';
import { WorkflowNameParams } from '../workflow/run-schema.ts';
import { companyClause } from '../workflow/visibility-query.ts';
import {
  CreateScheduleBody,
  ScheduleListResponseSchema,
  ScheduleResponseSchema,
  describeScheduleProblem,
  type CreateScheduleBody as CreateBody,
} from './schedule-schema.ts';
import {
  actionOf,
  findSchedule,
  newScheduleId,
  POLICIES,
  specOf,
  viewSchedule,
  withTemporal,
} from './temporal-schedule.ts';
import { capOwner, scheduleCap } from './schedule-cap.ts';

/**
 * A company holds at most this many schedules of one workflow, test and live
 * together (each is a Temporal Schedule, with its own scheduler on the
 * cluster): a company keeps a handful, and the cap keeps one from filling
 * the cluster. Counted in Temporal's visibility, which is eventually
 * consistent: how one gateway keeps it exact is schedule-cap.ts.
 */
export const MAX_SCHEDULES_PER_WORKFLOW = 100;
/** A listing reads up to twice the cap, so it shows every schedule even after such a race. */
const MAX_LISTED = 2 * MAX_SCHEDULES_PER_WORKFLOW;

/** The ids of the company's schedules of `def`, as Temporal's visibility lists them: at most `limit`. */
function companySchedules(temporal: Client, def: WorkflowDefinition, companyId: string, limit: number) {
  return withTemporal(temporal, async () => {
    const found: string[] = [];
    for await (const summary of temporal.schedule.list({ query: companyClause(companyId) })) {
      if (summary.action?.type === 'startWorkflow' && summary.action.workflowType === def.workflowType)
        found.push(summary.scheduleId);
      if (found.length >= limit) break;
    }
    return found;
  });
}

/** POST /api/workflow/:workflowName/schedules: a recurring schedule of runs acting as the caller's company. */
export const createScheduleRoute = defineRoute({
  method: 'post',
  path: '/api/workflow/:workflowName/schedules',
  operationId: 'createWorkflowSchedule',
  summary: 'Schedule a workflow to run repeatedly',
  description:
    'A Temporal Schedule (visible in the Web UI). `cron` (five fields) or `every` (e.g. `1h`), in `timezone` ' +
    '(IANA, default UTC); `input` is validated exactly like a trigger. A run still going when the next is due ' +
    'makes that one skipped.',
  tag: 'workflow',
  ...WORKFLOW_ACCESS.schedule,
  params: WorkflowNameParams,
  body: {
    schema: CreateScheduleBody,
    limit: '64kb',
    validate: true,
    describeProblem: describeScheduleProblem,
  },
  responses: {
    201: { description: 'Created.', schema: ScheduleResponseSchema },
    400: failure('Invalid spec, time zone or input.'),
    ...WORKFLOW_AUTH_FAILURES,
    403: failure('The API key lacks the workflows:schedule scope, or the input names another caller.'),
    404: failure('Unknown workflow name.'),
    409: failure(
      `The company holds ${MAX_SCHEDULES_PER_WORKFLOW} schedules of this workflow already; delete one first.`,
    ),
    500: failure('Temporal could not create the schedule.'),
  },
  async handler(ctx, { temporal, config }) {
    const def = ctx.state.workflow;
    const body = ctx.request.body as CreateBody;
    const caller = ctx.state.company;
    const { spec, memo } = specOf(body, config.scheduleMinIntervalSeconds);
    const input = validateWorkflowInput(def, body.input, caller, {
      blockedDomains: config.blockedEmailDomains,
    });
    const created = await scheduleCap(config).admit(
      capOwner(caller.companyId, def.workflowType),
      MAX_SCHEDULES_PER_WORKFLOW,
      () => companySchedules(temporal, def, caller.companyId, MAX_SCHEDULES_PER_WORKFLOW),
      async () => {
        const scheduleId = newScheduleId(def);
        await withTemporal(temporal, () =>
          temporal.schedule.create({
            scheduleId,
            spec,
            action: actionOf(def, input, caller, config.temporal.taskQueue, memo),
            policies: POLICIES,
            memo: { [CALLER_MEMO_KEY]: caller },
            typedSearchAttributes: [{ key: COMPANY_ID, value: caller.companyId }],
            state: { paused: body.paused ?? false },
          }),
        );
        return scheduleId;
      },
    );
    if (created === 'too-many')
      throw new HttpError(409, tooManySchedules(def.name, MAX_SCHEDULES_PER_WORKFLOW));
    const handle = temporal.schedule.getHandle(created);
    const desc = await withTemporal(temporal, () => handle.describe());
    ctx.status = 201;
    ctx.body = { success: true, schedule: viewSchedule(def, desc) };
  },
});

/** GET /api/workflow/:workflowName/schedules: the company's schedules of that workflow. */
export const listSchedulesRoute = defineRoute({
  method: 'get',
  path: '/api/workflow/:workflowName/schedules',
  operationId: 'listWorkflowSchedules',
  summary: "The company's schedules of a workflow",
  description: `All of them: a company holds at most ${MAX_SCHEDULES_PER_WORKFLOW} schedules of a workflow.`,
  tag: 'workflow',
  ...WORKFLOW_ACCESS.read,
  params: WorkflowNameParams,
  responses: {
    200: { description: 'The schedules.', schema: ScheduleListResponseSchema },
    ...WORKFLOW_AUTH_FAILURES,
    403: failure('The API key lacks the workflows:read scope.'),
    404: failure('Unknown workflow name.'),
    500: failure('Temporal could not be read.'),
  },
  async handler(ctx, { temporal }) {
    const def = ctx.state.workflow;
    const reach = reachOf(ctx);
    // Ownership (organization, test or live) is checked again per schedule (findSchedule).
    const ids = await companySchedules(temporal, def, reach.companyId, MAX_LISTED);
    const schedules = await Promise.all(
      ids.map((id) =>
        findSchedule(temporal, def, id, reach).then(
          ({ desc }) => viewSchedule(def, desc),
          () => undefined,
        ),
      ),
    );
    ctx.body = { success: true, workflowName: def.name, schedules: schedules.filter((s) => s !== undefined) };
  },
});
