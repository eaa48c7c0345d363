import {
  CancellationScope,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  sleep,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import {
  scheduledSendKey,
  type ScheduledSendInput,
  type ScheduledSendResult,
} from '../core/workflows/scheduled-send.ts';
import { sendOrMarkFailed } from './give-up.ts';
import { DATABASE_LOCAL_STEP, EMAIL_STEP } from './retry-policy.ts';

const { deliverScheduledEmail } = proxyActivities<Activities>(EMAIL_STEP);
const { cancelScheduledEmail, forgetScheduledEmail } = proxyLocalActivities<Activities>(DATABASE_LOCAL_STEP);

/**
 * One scheduled email (`send_at` on send or bulk; the gateway starts this run
 * as `scheduled-email-<email_id>` once the record is written).
 *
 * Sleeps on a durable timer until `sendAt` (Temporal keeps it across worker
 * and server restarts; a timer already due fires at once), then sends the
 * stored request through the email core under the email's send key, so
 * retries and replays send it once (core/email/send/scheduled-sends.ts). A
 * send that fails for good fails the record (give-up.ts) and the run.
 *
 * Cancelling the run (DELETE /api/email/scheduled/{id} does, and so may an
 * operator in the Web UI) cancels the email too unless it is already being
 * sent (core/email/send/scheduled-cancel.ts decides). Whatever the end, the
 * stored request is dropped.
 */
export async function sendScheduledEmail(input: ScheduledSendInput): Promise<ScheduledSendResult> {
  const { emailId } = input;
  try {
    // Workflow time: Date.now() is the deterministic time of this workflow task.
    const wait = Date.parse(input.sendAt) - Date.now();
    if (wait > 0) await sleep(wait);
    return await sendOrMarkFailed(scheduledSendKey(emailId), () => deliverScheduledEmail(emailId));
  } catch (err) {
    if (isCancellation(err)) await CancellationScope.nonCancellable(() => cancelScheduledEmail(emailId));
    throw err;
  } finally {
    await CancellationScope.nonCancellable(() => forgetScheduledEmail(emailId));
  }
}
