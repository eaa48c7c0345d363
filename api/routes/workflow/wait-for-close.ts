import type { Client } from '@temporalio/client';
import { HttpError } from '../../http-error.ts';
import { WAIT_INVALID } from '../../../core/workflows/workflow-messages.ts';
import type { Config } from '../../../core/config.ts';
import { createKeyedSlots, type KeyedSlots } from '../../../core/keyed-slots.ts';
import type { AppContext } from '../../types.ts';
import { HistoryEventFilterType } from './history-events.ts';

/** `?wait=` bounds, in seconds: long enough to cover a run, short enough for proxies' idle timeouts. */
export const MAX_WAIT_SECONDS = 60;

/** `?wait=<seconds>`: a whole number from 1 to 60, or absent (answer at once). */
export function waitFromQuery(value: string | string[] | undefined): number | undefined {
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || !/^\d{1,2}$/.test(text)) throw new HttpError(400, WAIT_INVALID);
  const seconds = Number(text);
  if (seconds < 1 || seconds > MAX_WAIT_SECONDS) throw new HttpError(400, WAIT_INVALID);
  return seconds;
}

/**
 * The waits each company has open on this gateway app (its configuration is
 * the app's own object), WORKFLOW_WAITS_PER_COMPANY each. Each wait holds a
 * long poll on Temporal's connection and memory here: 3,000 from one company
 * stalled `/health` for seconds and made other companies' reads time out.
 * Past the bound a request is answered at once, as without `wait`: the
 * caller's next poll sees the run as it is then.
 */
const slotsByApp = new WeakMap<Config, KeyedSlots>();
export function waitSlots(config: Config): KeyedSlots {
  let slots = slotsByApp.get(config);
  if (!slots) slotsByApp.set(config, (slots = createKeyedSlots(config.workflowWaitsPerCompany)));
  return slots;
}

/** The status a wait whose client went away is logged and counted with (nginx's; never sent). */
export const CLIENT_CLOSED_REQUEST = 499;

/**
 * Waits until the run closes, at most `seconds`, or until the client goes
 * away. Temporal long-polls for the close event (a history request that the
 * server holds until the run closes or its long-poll interval, 20 s, ends),
 * so a waiting request holds no thread, no timer loop and no database
 * connection. When the wait ends first, the poll under way is left to end by
 * itself (at the server's interval, at most LONG_POLL_DEADLINE_MS) rather
 * than cancelled: cancelling it needs the SDK's withAbortSignal, whose
 * AsyncLocalStorage slows every request of the process (temporal-deadlines.ts).
 * How the run ended is read afterwards by the caller (describe), so this
 * never throws for a failed or cancelled run.
 *
 * The wait is for the workflow id's run, not one execution of it: a run that
 * continues as new (or retries) is followed through its close event, but an
 * operator's Reset closes the waited execution (terminated) and starts
 * another under the same id, which `GET` then answers for. So when the
 * waited execution closes while a newer one of the same id is running, the
 * wait goes on with that one until the deadline; answering `running` there
 * would cut the wait short for a run that has not ended.
 */
export async function waitForClose(
  ctx: AppContext,
  temporal: Client,
  /** The workflow id and the execution being waited for (the one the caller described). */
  execution: { workflowId: string; runId: string },
  seconds: number,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  let onClose: (() => void) | undefined;
  let over = false;
  const ended = new Promise<undefined>((resolve) => {
    onClose = () => {
      over = true;
      resolve(undefined);
    };
    timer = setTimeout(onClose, seconds * 1000);
    ctx.req.once('close', onClose);
  });
  /** `call`'s result, or undefined once the wait is over or the call failed. */
  const untilOver = <T>(call: () => Promise<T>) => Promise.race([call().catch(() => undefined), ended]);
  try {
    let waited = execution.runId;
    for (;;) {
      const closed = await untilOver(() => closeOf(temporal, execution.workflowId, waited, () => over));
      if (over) return;
      // The poll failed (Temporal unreachable, an unknown run): answered as the run is.
      if (closed === undefined) return;
      const latest = await untilOver(() => temporal.workflow.getHandle(execution.workflowId).describe());
      // Still the same execution: answered as it is, never a loop of calls until the deadline.
      if (latest?.status.name !== 'RUNNING' || latest.runId === waited) return;
      waited = latest.runId;
    }
  } finally {
    clearTimeout(timer);
    if (onClose) ctx.req.off('close', onClose);
  }
}

/**
 * Long-polls the history of execution `runId` for its close event, following
 * a close that names a next execution (continue-as-new, a retry, a cron
 * run); resolves with the last execution's run id once it closed. Stops
 * polling again once `over()` says nobody waits any longer.
 */
async function closeOf(
  temporal: Client,
  workflowId: string,
  runId: string,
  over: () => boolean,
): Promise<string | undefined> {
  const execution = { workflowId, runId };
  let nextPageToken: Uint8Array | undefined;
  while (!over()) {
    const page = await temporal.workflowService.getWorkflowExecutionHistory({
      namespace: temporal.options.namespace,
      execution,
      skipArchival: true,
      waitNewEvent: true,
      historyEventFilterType: HistoryEventFilterType.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT,
      ...(nextPageToken ? { nextPageToken } : {}),
    });
    const event = page.history?.events?.[0];
    if (!event) {
      // The server's long poll ended with nothing: poll again from where it stopped.
      nextPageToken = page.nextPageToken ?? undefined;
      continue;
    }
    const next =
      event.workflowExecutionCompletedEventAttributes?.newExecutionRunId ||
      event.workflowExecutionFailedEventAttributes?.newExecutionRunId ||
      event.workflowExecutionTimedOutEventAttributes?.newExecutionRunId ||
      event.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
    if (!next) return execution.runId;
    execution.runId = next;
    nextPageToken = undefined;
  }
  return undefined;
}
