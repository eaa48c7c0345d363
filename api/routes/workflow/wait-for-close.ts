import type { Client } from '@temporalio/client';
import { HttpError } from '../../http-error.ts';
import { WAIT_INVALID } from '../../../core/workflows/workflow-messages.ts';
import type { Config } from '../../../core/config.ts';
import { createKeyedSlots, type KeyedSlots } from '../../../core/keyed-slots.ts';
import type { AppContext } from '../../types.ts';

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
 * away. Temporal long-polls for the close event (the handle's result: a gRPC
 * call waiting on the server), so a waiting request holds no thread, no
 * timer loop and no database connection; an aborted wait cancels that call.
 * How the run ended is read afterwards by the caller (describe), so this
 * never throws for a failed or cancelled run.
 *
 * The wait is for the workflow id's run, not one execution of it: a run that
 * continues as new is followed by the result call itself, but an operator's
 * Reset closes the waited execution (terminated) and starts another under
 * the same id, which `GET` then answers for. So when the waited execution
 * closes while a newer one of the same id is running, the wait goes on with
 * that one until the deadline; answering `running` there would cut the wait
 * short for a run that has not ended.
 */
export async function waitForClose(
  ctx: AppContext,
  temporal: Client,
  /** The workflow id and the execution being waited for (the one the caller described). */
  execution: { workflowId: string; runId: string },
  seconds: number,
): Promise<void> {
  const controller = new AbortController();
  const stop = () => controller.abort();
  const timer = setTimeout(stop, seconds * 1000);
  ctx.req.once('close', stop);
  const within = <T>(call: () => Promise<T>) => temporal.withAbortSignal(controller.signal, call);
  try {
    let waited = execution.runId;
    for (;;) {
      await within(() => temporal.workflow.getHandle(execution.workflowId, waited).result()).catch(
        () => undefined,
      );
      if (controller.signal.aborted) return;
      const latest = await within(() => temporal.workflow.getHandle(execution.workflowId).describe()).catch(
        () => undefined,
      );
      // Still the same execution (the result call failed rather than the run closing):
      // answered as it is, never a loop of calls until the deadline.
      if (latest?.status.name !== 'RUNNING' || latest.runId === waited) return;
      waited = latest.runId;
    }
  } finally {
    clearTimeout(timer);
    ctx.req.off('close', stop);
  }
}
