import { ActivityCancellationType, patched } from '@temporalio/workflow';
import type { ActivityOptions, LocalActivityOptions } from '@temporalio/workflow';

/**
 * How activities retry. Transient failures back off
 * 1s, 2s, 4s, … capped at 30s, at most 8 attempts and never longer than
 * 5 minutes in total, after which the run fails with the last error.
 * Non-retryable failures (activities/failures.ts) skip all of this.
 */
export const RETRY = {
  initialInterval: '1s',
  backoffCoefficient: 2,
  maximumInterval: '30s',
  maximumAttempts: 8,
} as const;

/**
 * Database steps as normal activities: quick, so a hung call is abandoned and
 * retried fast. The workflows run theirs as local activities (below).
 */
export const DATABASE_STEP: ActivityOptions = {
  startToCloseTimeout: '10s',
  scheduleToCloseTimeout: '5m',
  retry: RETRY,
};

/**
 * Short database steps run as local activities (user read and claim, release,
 * the sent flag, marking a failed email): executed by the worker inside the
 * workflow task that schedules them and recorded as a marker, instead of a
 * round trip through the Temporal server's activity task queue for each.
 * The same timeouts and retries as DATABASE_STEP: an attempt is abandoned
 * after 10s, retried 1s, 2s, 4s, … apart (in the worker while the backoff is
 * under a minute, then through a durable timer), at most 8 attempts within
 * 5 minutes. Only for quick, idempotent steps: a local activity that outlives
 * its worker is re-run from the start by the next one.
 */
export const DATABASE_LOCAL_STEP: LocalActivityOptions = {
  startToCloseTimeout: '10s',
  scheduleToCloseTimeout: '5m',
  retry: RETRY,
};

/**
 * Email steps: the provider call may take a while (startToClose 30s), but the
 * activity heartbeats every 2s, so a worker that dies mid-send is detected
 * after 10s and the step retried elsewhere. The retry carries the same
 * idempotency key, so it never sends a second email.
 */
export const EMAIL_STEP: ActivityOptions = {
  startToCloseTimeout: '30s',
  heartbeatTimeout: '10s',
  scheduleToCloseTimeout: '5m',
  retry: RETRY,
};

/**
 * The email step's options in a run: a run cancelled while an attempt is at
 * the provider waits for that attempt (a cancel never unsends it) and, when it
 * sent, completes with its emailId instead of ending `cancelled` with the
 * email sent behind it. A step waiting to retry is cancelled at once, as
 * before. Runs started before this rule replay with the old one (`patched`).
 */
export function emailStepOptions(): ActivityOptions {
  return patched('email-step-waits-for-attempt-on-cancel')
    ? { ...EMAIL_STEP, cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED }
    : EMAIL_STEP;
}
