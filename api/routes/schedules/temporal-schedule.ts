import { randomUUID } from 'node:crypto';
import {
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleDescription,
  type ScheduleHandle,
  type ScheduleSpec,
} from '@temporalio/client';
import { CALLER_MEMO_KEY, withinReach, type Caller, type Reach } from '../../../core/identity.ts';
import { companyPriority } from '../../../core/workflows/fairness.ts';
import type { WorkflowDefinition } from '../../../core/workflows/definition.ts';
import {
  everyTooShort,
  scheduleInvalid,
  SCHEDULE_NOT_FOUND,
  SCHEDULE_SPEC_REQUIRED,
  TIMEZONE_INVALID,
} from '../../../core/workflows/workflow-messages.ts';
import { HttpError } from '../../http-error.ts';
import { searchAttributesFor } from '../workflow/trigger.ts';
import { withinDeadline } from '../../temporal-deadlines.ts';
import { temporalError } from '../workflow/temporal-errors.ts';
import type { Schedule } from './schedule-schema.ts';

/**
 * A company's recurring schedule of a workflow is a Temporal Schedule (Web
 * UI: Schedules), never a timer loop of ours. Its memo names the company (who
 * may see and change it); each run it starts carries the same `caller` memo
 * and search attributes as a triggered run, so it acts as that company, and
 * `schedule` (the spec as the company wrote it: Temporal keeps cron as
 * calendars) in the action's memo, which, unlike the schedule's, can change.
 */
const SPEC_MEMO_KEY = 'schedule';

export interface SpecFields {
  cron?: string | undefined;
  every?: string | undefined;
  timezone?: string | undefined;
}

const UNIT_SECONDS = { s: 1, m: 60, h: 3_600, d: 86_400 } as const;
/**
 * An IANA time zone name: one ICU knows, by its current or an older name
 * (`Intl.supportedValuesOf` lists one name per zone, and ICU's canonical names
 * lag the database: it lists Asia/Calcutta, not Asia/Kolkata), spelled as
 * the database does. ICU takes any case (`europe/berlin`); Temporal, reading
 * Go's copy of the database, takes only the exact name, so a zone ICU would
 * name otherwise only by case is refused here. Temporal checks the name
 * again (`us/pacific`, an older name in the wrong case): withTemporal words
 * its refusal the same way.
 */
function isTimeZone(name: string): boolean {
  if (name === 'UTC') return true;
  try {
    const known = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
    if (known !== name && known.toLowerCase() === name.toLowerCase()) return false;
    return /^[A-Za-z]/.test(name);
  } catch {
    return false;
  }
}

/** How Temporal refuses a time zone its database does not know (Go's `time.LoadLocation`). */
const UNKNOWN_TIME_ZONE = /unknown time zone/i;

/** The schedule's spec, checked: exactly one of cron and every, every ≥ the minimum, a known time zone. */
export function specOf(
  fields: SpecFields,
  minIntervalSeconds: number,
): { spec: ScheduleSpec; memo: SpecFields } {
  if ((fields.cron === undefined) === (fields.every === undefined))
    throw new HttpError(400, SCHEDULE_SPEC_REQUIRED);
  const timezone = fields.timezone ?? 'UTC';
  if (!isTimeZone(timezone)) throw new HttpError(400, TIMEZONE_INVALID);
  if (fields.every !== undefined) {
    const unit = fields.every.slice(-1) as keyof typeof UNIT_SECONDS;
    const seconds = Number(fields.every.slice(0, -1)) * UNIT_SECONDS[unit];
    if (seconds < minIntervalSeconds) throw new HttpError(400, everyTooShort(minIntervalSeconds));
    return {
      spec: { intervals: [{ every: `${seconds}s` }], timezone },
      memo: { every: fields.every, timezone },
    };
  }
  return { spec: { cronExpressions: [fields.cron!], timezone }, memo: { cron: fields.cron, timezone } };
}

/** What a schedule's runs start with: the workflow, its validated input, the company as caller. */
export function actionOf(
  def: WorkflowDefinition,
  input: Record<string, unknown>,
  caller: Caller,
  taskQueue: string,
  spec: SpecFields,
) {
  return {
    type: 'startWorkflow' as const,
    workflowType: def.workflowType,
    // Temporal appends each start's time: `<name>-sched-<uuid>-<time>` is the run's runId.
    workflowId: `${def.name}-sched-${randomUUID()}`,
    taskQueue,
    args: [input],
    memo: { [CALLER_MEMO_KEY]: caller, [SPEC_MEMO_KEY]: spec },
    typedSearchAttributes: searchAttributesFor(def, input, caller),
    // Its runs take their company's turns on the task queue (core/workflows/fairness.ts). The
    // SDK's types leave `priority` out of a schedule's action, but it sends it to the server.
    ...companyPriority(caller.companyId),
  };
}

export const newScheduleId = (def: WorkflowDefinition) => `${def.name}-${randomUUID()}`;

/** Runs start one at a time: a run still going when the next is due makes that one skipped. */
export const POLICIES = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' } as const;

/** gRPC codes Temporal answers with: the id is unknown; the request is not valid (e.g. a cron it cannot parse). */
const GRPC_INVALID_ARGUMENT = 3;
const GRPC_NOT_FOUND = 5;

/** A call to Temporal within the gateway's deadline; its failures in the interface's words. */
export async function withTemporal<T>(temporal: Client, call: () => Promise<T>): Promise<T> {
  try {
    return await withinDeadline(call);
  } catch (err) {
    if (err instanceof HttpError) throw err;
    const code = (err as { code?: unknown })?.code ?? (err as { cause?: { code?: unknown } })?.cause?.code;
    if (err instanceof ScheduleNotFoundError || code === GRPC_NOT_FOUND)
      throw new HttpError(404, SCHEDULE_NOT_FOUND);
    const message = err instanceof Error ? err.message : String(err);
    // The SDK checks a spec before sending it (a TypeError: "Minute is not in range [0-59]"); the server
    // checks the rest, and the SDK's schedule client rethrows its refusals as TypeErrors too. A zone ICU
    // knows and Temporal does not gets the message specOf gives any other unknown zone.
    if (code === GRPC_INVALID_ARGUMENT || err instanceof TypeError)
      throw new HttpError(
        400,
        UNKNOWN_TIME_ZONE.test(message) ? TIMEZONE_INVALID : scheduleInvalid(message.slice(0, 200)),
      );
    throw temporalError(err, 'manage schedule');
  }
}

/**
 * The schedule with this id, if it is a schedule of `def` and the caller's
 * company's (and organization's, for a bound key); anything else is 404
 * exactly like an unknown id.
 */
export async function findSchedule(
  temporal: Client,
  def: WorkflowDefinition,
  scheduleId: string,
  reach: Reach,
): Promise<{ handle: ScheduleHandle; desc: ScheduleDescription }> {
  const handle = temporal.schedule.getHandle(scheduleId);
  const desc = await withTemporal(temporal, () => handle.describe());
  const owner = desc.memo?.[CALLER_MEMO_KEY];
  if (
    desc.action.type !== 'startWorkflow' ||
    desc.action.workflowType !== def.workflowType ||
    typeof owner !== 'object' ||
    owner === null ||
    !withinReach(owner as Caller, reach)
  )
    throw new HttpError(404, SCHEDULE_NOT_FOUND);
  return { handle, desc };
}

/** The answer for one schedule. */
export function viewSchedule(def: WorkflowDefinition, desc: ScheduleDescription): Schedule {
  const action = desc.action;
  const spec = (action.memo?.[SPEC_MEMO_KEY] ?? {}) as SpecFields;
  return {
    scheduleId: desc.scheduleId,
    workflowName: def.name,
    cron: spec.cron ?? null,
    every: spec.every ?? null,
    timezone: spec.timezone ?? 'UTC',
    input: action.args?.[0] ?? null,
    paused: desc.state.paused,
    nextRunAt: desc.info.nextActionTimes.slice(0, 5).map((d) => d.toISOString()),
    recentRuns: desc.info.recentActions.map((a) => ({
      runId: a.action.workflow.workflowId,
      startedAt: a.takenAt.toISOString(),
    })),
    createdAt: desc.info.createdAt.toISOString(),
  };
}
