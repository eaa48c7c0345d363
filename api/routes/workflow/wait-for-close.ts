import type { Client, WorkflowHandle } from '@temporalio/client';
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
 */
export async function waitForClose(
  ctx: AppContext,
  temporal: Client,
  handle: WorkflowHandle,
  seconds: number,
): Promise<void> {
  const controller = new AbortController();
  const stop = () => controller.abort();
  const timer = setTimeout(stop, seconds * 1000);
  ctx.req.once('close', stop);
  try {
    await temporal.withAbortSignal(controller.signal, () => handle.result()).catch(() => undefined);
  } finally {
    clearTimeout(timer);
    ctx.req.off('close', stop);
  }
}
