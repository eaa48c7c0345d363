import type { WorkflowExecutionDescription, WorkflowHandle } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';

export type RunStatus = 'pending' | 'running' | 'completed' | 'failed' | 'cancelled';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
type Timestamp =
  { seconds?: { toNumber(): number } | number | null; nanos?: number | null } | null | undefined;

const EVENT_WORKFLOW_TASK_STARTED = 6; // temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED

/**
 * Temporal's execution status → the seed's run status (DESIGN.md, Status
 * mapping). `pending` is a RUNNING execution whose first workflow task no
 * worker has started yet: its history holds no WorkflowTaskStarted event.
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
      return history.some((e) => Number(e.eventType) === EVENT_WORKFLOW_TASK_STARTED) ? 'running' : 'pending';
  }
}

export function timestampToIso(ts: Timestamp): string | undefined {
  if (!ts || ts.seconds == null) return undefined;
  const seconds = typeof ts.seconds === 'number' ? ts.seconds : ts.seconds.toNumber();
  return new Date(seconds * 1000 + Math.floor((ts.nanos ?? 0) / 1e6)).toISOString();
}

export interface RunView {
  status: RunStatus;
  result: unknown;
  error: string | null;
  createdAt: string;
  updatedAt: string;
}

/**
 * Everything GET answers about one run. `updatedAt` is the close time of a
 * closed run, else the time of the last event in its history (the latest
 * progress Temporal recorded: a step scheduled, started, retried or finished).
 * `result` is `{ result: <what the workflow returned> }` when completed — the
 * seed's `result.result` — and null otherwise; `error` is the deepest cause of
 * the failure (e.g. `user not found: u1`, not "Activity task failed").
 */
export async function viewRun(
  handle: WorkflowHandle,
  desc: WorkflowExecutionDescription,
  history: HistoryEvent[],
): Promise<RunView> {
  const status = mapStatus(desc.status.name, history);
  const lastEvent = history[history.length - 1];
  const createdAt = desc.startTime.toISOString();
  const updatedAt =
    desc.closeTime?.toISOString() ?? timestampToIso(lastEvent?.eventTime as Timestamp) ?? createdAt;
  let result: unknown = null;
  let error: string | null = null;
  if (status === 'completed') {
    result = { result: await handle.result() };
  } else if (status === 'failed') {
    error = await handle.result().then(
      () => 'workflow failed',
      (err: unknown) => deepestMessage(err) ?? 'workflow failed',
    );
    // Say why a run that never failed by itself ended (an operator or a timeout ended it).
    if (desc.status.name === 'TERMINATED') error = `workflow terminated: ${error}`;
    if (desc.status.name === 'TIMED_OUT' && !/time/i.test(error)) error = `workflow timed out: ${error}`;
  }
  return { status, result, error, createdAt, updatedAt };
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
