import { TimeoutFailure, type WorkflowExecutionDescription, type WorkflowHandle } from '@temporalio/client';
import {
  WORKFLOW_FAILED,
  workflowTerminated,
  workflowTimedOut,
} from '../../../core/workflows/workflow-messages.ts';
import { EventType, hasEvent, type HistoryEvent } from './history-events.ts';
import type { RunStatus } from './run-schema.ts';

type Timestamp =
  { seconds?: { toNumber(): number } | number | null; nanos?: number | null } | null | undefined;

/**
 * Temporal's execution status → the interface's run status. `pending` is a
 * RUNNING execution whose first workflow task no worker has started yet: its
 * history holds no WorkflowTaskStarted event. FAILED, TIMED_OUT and
 * TERMINATED are all `failed`; CANCELLED is `cancelled`.
 */
export function mapStatus(temporalStatus: string, history: HistoryEvent[]): RunStatus {
  switch (temporalStatus) {
    case 'COMPLETED':
      return 'completed';
    case 'FAILED':
    case 'TIMED_OUT':
    case 'TERMINATED':
      return 'failed';
    case 'CANCELLED':
      return 'cancelled';
    default:
      return hasEvent(history, EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED) ? 'running' : 'pending';
  }
}

export function timestampToIso(ts: Timestamp): string | undefined {
  if (!ts || ts.seconds == null) return undefined;
  const seconds = typeof ts.seconds === 'number' ? ts.seconds : ts.seconds.toNumber();
  return new Date(seconds * 1000 + Math.floor((ts.nanos ?? 0) / 1e6)).toISOString();
}

export interface RunView {
  status: RunStatus;
  /** Only when completed (the interface's "object or absent"). */
  result?: { result: unknown };
  error: string | null;
  createdAt: string;
  updatedAt: string;
  /**
   * Only while the run is pending or running: whether a cancellation was
   * requested (a DELETE answered 202). The run may still end `completed`.
   */
  cancelRequested?: boolean;
}

/**
 * When the run was created: its first execution's start. A run an operator
 * reset (or that continued as new) is a later execution, which started then.
 */
async function firstStartOf(handle: WorkflowHandle, desc: WorkflowExecutionDescription): Promise<Date> {
  const firstRunId = desc.raw.workflowExecutionInfo?.firstRunId;
  if (!firstRunId || firstRunId === desc.runId) return desc.startTime;
  return (await handle.client.getHandle(desc.workflowId, firstRunId).describe()).startTime;
}

/**
 * Everything GET answers about one run. `createdAt` is when the run was
 * triggered (its first execution's start). `updatedAt` is the close time of a
 * closed run, else the time of the last event in its history (the latest
 * progress Temporal recorded: a step scheduled, started, retried or finished).
 * `result` is `{ result: <what the workflow returned> }` when completed (the
 * interface's `result.result`) and absent otherwise ("object or absent"); `error` is the deepest cause
 * of the failure (e.g. `user not found: u1`, not "Activity task failed").
 * While the run is still going, `cancelRequested` says whether it was asked to stop.
 */
export async function viewRun(
  handle: WorkflowHandle,
  desc: WorkflowExecutionDescription,
  history: HistoryEvent[],
  /** The runs list leaves `result` out: no need to read it. */
  { withResult = true }: { withResult?: boolean } = {},
): Promise<RunView> {
  const status = mapStatus(desc.status.name, history);
  const lastEvent = history[history.length - 1];
  const createdAt = (await firstStartOf(handle, desc)).toISOString();
  const updatedAt = desc.closeTime?.toISOString() ?? latestProgress(desc, lastEvent) ?? createdAt;
  let result: { result: unknown } | undefined;
  let error: string | null = null;
  if (status === 'completed') {
    if (withResult) result = { result: await handle.result() };
  } else if (status === 'failed') {
    const failure = await handle.result().then(
      () => undefined,
      (err: unknown) => err,
    );
    error = deepestMessage(failure) ?? WORKFLOW_FAILED;
    // Say why a run that never failed by itself ended (an operator or a timeout ended it).
    if (desc.status.name === 'TERMINATED') error = workflowTerminated(error);
    if (desc.status.name === 'TIMED_OUT' && !hasCause(failure, TimeoutFailure))
      error = workflowTimedOut(error);
  }
  const withResultField = result === undefined ? {} : { result };
  if (status === 'pending' || status === 'running') {
    const cancelRequested = hasEvent(history, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED);
    return { status, ...withResultField, error, createdAt, updatedAt, cancelRequested };
  }
  return { status, ...withResultField, error, createdAt, updatedAt };
}

/**
 * An open run's latest progress: its last history event, or a later attempt
 * of a step being retried (Temporal records a step's retries in its pending
 * activity, not in the history, until the step ends).
 */
function latestProgress(
  desc: WorkflowExecutionDescription,
  lastEvent: HistoryEvent | undefined,
): string | undefined {
  const times = [timestampToIso(lastEvent?.eventTime as Timestamp)];
  for (const pending of desc.raw.pendingActivities ?? [])
    times.push(
      timestampToIso(pending.lastStartedTime as Timestamp),
      timestampToIso(pending.lastAttemptCompleteTime as Timestamp),
    );
  // ISO strings of one format order as the instants they name.
  return times
    .filter((t) => t !== undefined)
    .sort()
    .at(-1);
}

/** Whether `err` or any error in its `cause` chain is a `type`. */
function hasCause(err: unknown, type: abstract new (...args: never[]) => Error): boolean {
  let current: unknown = err;
  for (let depth = 0; current instanceof Error && depth < 20; depth++) {
    if (current instanceof type) return true;
    current = (current as Error).cause;
  }
  return false;
}

/**
 * The message at the end of the `cause` chain: WorkflowFailedError →
 * ActivityFailure → ApplicationFailure("user not found: u1"). The outer
 * layers only say "Workflow execution failed" / "Activity task failed".
 */
export function deepestMessage(err: unknown): string | undefined {
  let current: unknown = err;
  let message: string | undefined;
  for (let depth = 0; current instanceof Error && depth < 20; depth++) {
    if (current.message) message = current.message;
    current = current.cause;
  }
  return message;
}
