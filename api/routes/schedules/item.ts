import { defineRoute, failure } from '../../route.ts';
import { validateWorkflowInput } from '../../../core/workflows/validate-input.ts';
import { WORKFLOW_ACCESS, WORKFLOW_AUTH_FAILURES, reachOf } from '../workflow/owner.ts';
import {
  ScheduleDeletedSchema,
  ScheduleParams,
  ScheduleResponseSchema,
  describeScheduleProblem,
  UpdateScheduleBody,
  type UpdateScheduleBody as UpdateBody,
} from './schedule-schema.ts';
import {
  actionOf,
  findSchedule,
  specOf,
  viewSchedule,
  withTemporal,
  type SpecFields,
} from './temporal-schedule.ts';
import { capOwner, scheduleCap } from './schedule-cap.ts';

const ITEM_PATH = '/api/workflow/:workflowName/schedules/:scheduleId';
const NOT_FOUND = failure("Unknown workflow or schedule, or another company's schedule.");
const BAD_ID = failure('A scheduleId longer than 200 characters.');

/** GET one schedule: its spec, input, state, next and recent runs. */
export const readScheduleRoute = defineRoute({
  method: 'get',
  path: ITEM_PATH,
  operationId: 'getWorkflowSchedule',
  summary: 'A schedule',
  tag: 'workflow',
  ...WORKFLOW_ACCESS.read,
  params: ScheduleParams,
  responses: {
    200: { description: 'The schedule.', schema: ScheduleResponseSchema },
    400: BAD_ID,
    ...WORKFLOW_AUTH_FAILURES,
    403: failure('The API key lacks the workflows:read scope.'),
    404: NOT_FOUND,
    500: failure('Temporal could not be read.'),
  },
  async handler(ctx, { temporal }) {
    const def = ctx.state.workflow;
    const { desc } = await findSchedule(temporal, def, String(ctx.params['scheduleId']), reachOf(ctx));
    ctx.body = { success: true, schedule: viewSchedule(def, desc) };
  },
});

/** PATCH: pause or unpause, change the spec (cron/every/timezone) or the input (validated like a trigger). */
export const updateScheduleRoute = defineRoute({
  method: 'patch',
  path: ITEM_PATH,
  operationId: 'updateWorkflowSchedule',
  summary: 'Pause, unpause or change a schedule',
  description: 'A spec given replaces the spec (give `cron` or `every`; `timezone` alone keeps the timing).',
  tag: 'workflow',
  ...WORKFLOW_ACCESS.schedule,
  params: ScheduleParams,
  body: {
    schema: UpdateScheduleBody,
    limit: '64kb',
    validate: true,
    describeProblem: describeScheduleProblem,
  },
  responses: {
    200: { description: 'The schedule as changed.', schema: ScheduleResponseSchema },
    400: failure('Invalid spec, time zone or input, or a scheduleId longer than 200 characters.'),
    ...WORKFLOW_AUTH_FAILURES,
    403: failure('The API key lacks the workflows:schedule scope, or the input names another caller.'),
    404: NOT_FOUND,
    500: failure('Temporal could not change the schedule.'),
  },
  async handler(ctx, { temporal, config }) {
    const def = ctx.state.workflow;
    const body = ctx.request.body as UpdateBody;
    const caller = ctx.state.company;
    const { handle, desc } = await findSchedule(
      temporal,
      def,
      String(ctx.params['scheduleId']),
      reachOf(ctx),
    );
    const current = viewSchedule(def, desc);
    // A new cron or every replaces the timing; the time zone stays unless the body names one.
    const newTiming = body.cron !== undefined || body.every !== undefined;
    const timing = newTiming || body.timezone !== undefined;
    const fields: SpecFields = {
      cron: newTiming ? body.cron : (current.cron ?? undefined),
      every: newTiming ? body.every : (current.every ?? undefined),
      timezone: body.timezone ?? current.timezone,
    };
    const next = specOf(fields, config.scheduleMinIntervalSeconds);
    const input =
      body.input === undefined
        ? (current.input as Record<string, unknown>)
        : validateWorkflowInput(def, body.input, caller, { blockedDomains: config.blockedEmailDomains });
    if (timing || body.input !== undefined)
      await withTemporal(temporal, () =>
        handle.update((prev) => ({
          ...prev,
          ...(timing ? { spec: next.spec } : {}),
          action: {
            ...actionOf(def, input, caller, config.temporal.taskQueue, next.memo),
            workflowId: prev.action.workflowId,
          },
        })),
      );
    if (body.paused === true && !current.paused)
      await withTemporal(temporal, () => handle.pause('paused through the API'));
    if (body.paused === false && current.paused)
      await withTemporal(temporal, () => handle.unpause('unpaused through the API'));
    const after = await withTemporal(temporal, () => handle.describe());
    ctx.body = { success: true, schedule: viewSchedule(def, after) };
  },
});

/** DELETE: the schedule stops; runs it already started go on. */
export const deleteScheduleRoute = defineRoute({
  method: 'delete',
  path: ITEM_PATH,
  operationId: 'deleteWorkflowSchedule',
  summary: 'Delete a schedule',
  description:
    'Runs it already started are not affected (cancel them with DELETE /api/workflow/{name}?runId=).',
  tag: 'workflow',
  ...WORKFLOW_ACCESS.schedule,
  params: ScheduleParams,
  responses: {
    200: { description: 'Deleted.', schema: ScheduleDeletedSchema },
    400: BAD_ID,
    ...WORKFLOW_AUTH_FAILURES,
    403: failure('The API key lacks the workflows:schedule scope.'),
    404: NOT_FOUND,
    500: failure('Temporal could not delete the schedule.'),
  },
  async handler(ctx, { temporal, config }) {
    const def = ctx.state.workflow;
    const { handle, desc } = await findSchedule(
      temporal,
      def,
      String(ctx.params['scheduleId']),
      reachOf(ctx),
    );
    await withTemporal(temporal, () => handle.delete());
    scheduleCap(config).forget(capOwner(ctx.state.company.companyId, def.workflowType), desc.scheduleId);
    ctx.body = { success: true, scheduleId: desc.scheduleId, deleted: true };
  },
});
