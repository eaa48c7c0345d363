import { Type, type Static } from '@sinclair/typebox';
import { describePatchProblem } from '../../../core/email/email-messages.ts';
import type { Problem } from '../../../core/validation.ts';
import { EVERY_INVALID, TIMEZONE_INVALID } from '../../../core/workflows/workflow-messages.ts';

/**
 * Recurring schedules of a workflow: request and answer shapes (validation,
 * types and the API reference from one definition).
 */

/** When a schedule fires: a 5-field cron expression or an interval, in a time zone. */
const SPEC_FIELDS = {
  cron: Type.Optional(
    Type.String({
      maxLength: 100,
      // Five fields of cron characters, one space apart (minute granularity).
      pattern: '^[0-9A-Za-z*/,?#-]+( [0-9A-Za-z*/,?#-]+){4}$',
      description: 'a five-field cron expression, e.g. 0 9 * * MON',
    }),
  ),
  every: Type.Optional(
    Type.String({
      pattern: '^[1-9][0-9]{0,5}[smhd]$',
      description:
        'An interval: a number and s, m, h or d, e.g. `1h`; at least SCHEDULE_MIN_INTERVAL_SECONDS.',
    }),
  ),
  timezone: Type.Optional(
    Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone name (default `UTC`).' }),
  ),
};

const INPUT = Type.Object(
  {},
  { additionalProperties: true, description: "The workflow's input, as for a trigger." },
);

export const CreateScheduleBody = Type.Object(
  { ...SPEC_FIELDS, input: INPUT, paused: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);
export type CreateScheduleBody = Static<typeof CreateScheduleBody>;

export const UpdateScheduleBody = Type.Object(
  { ...SPEC_FIELDS, input: Type.Optional(INPUT), paused: Type.Optional(Type.Boolean()) },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateScheduleBody = Static<typeof UpdateScheduleBody>;

const describeScheduleBody = describePatchProblem(Object.keys(UpdateScheduleBody.properties));

/**
 * A schedule body's problem in the words docs/workflows.md lists: `every`
 * and `timezone` as the checks in code word them (one message whatever the
 * schema caught: a pattern, a type, a length), an empty PATCH as what it
 * lacks; anything else as any body's (`invalid field cron: …`).
 */
export function describeScheduleProblem(problem: Problem): string {
  if (problem.kind === 'invalid' && problem.field === 'every') return EVERY_INVALID;
  if (problem.kind === 'invalid' && problem.field === 'timezone') return TIMEZONE_INVALID;
  return describeScheduleBody(problem);
}

export const ScheduleParams = Type.Object({
  workflowName: Type.String(),
  scheduleId: Type.String({ maxLength: 200 }),
});

export const ScheduleSchema = Type.Object({
  scheduleId: Type.String(),
  workflowName: Type.String(),
  cron: Type.Union([Type.String(), Type.Null()]),
  every: Type.Union([Type.String(), Type.Null()]),
  timezone: Type.String(),
  input: Type.Unknown(),
  paused: Type.Boolean(),
  /** Temporal's next start times (up to 5). */
  nextRunAt: Type.Array(Type.String({ format: 'date-time' })),
  /** The runs it started most recently, newest last (`runId` as for a trigger). */
  recentRuns: Type.Array(
    Type.Object({ runId: Type.String(), startedAt: Type.String({ format: 'date-time' }) }),
  ),
  createdAt: Type.String({ format: 'date-time' }),
});
export type Schedule = Static<typeof ScheduleSchema>;

export const ScheduleResponseSchema = Type.Object({ success: Type.Literal(true), schedule: ScheduleSchema });
export const ScheduleListResponseSchema = Type.Object({
  success: Type.Literal(true),
  workflowName: Type.String(),
  schedules: Type.Array(ScheduleSchema),
});
export const ScheduleDeletedSchema = Type.Object({
  success: Type.Literal(true),
  scheduleId: Type.String(),
  deleted: Type.Literal(true),
});
