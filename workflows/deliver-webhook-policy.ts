import type { ActivityOptions } from '@temporalio/workflow';
import { ENDPOINT_GONE, type DeliveryRetry } from '../core/webhooks/delivery-workflow.ts';

/**
 * The options of a delivery's attempt activity: Temporal retries it with
 * exponential backoff (initial, ×2, at most the maximum: WEBHOOK_RETRY_*)
 * until one gets a 2xx or `giveUpSeconds` have passed since the first.
 */
export const attemptOptions = (retry: DeliveryRetry): ActivityOptions => ({
  // The POST has its own timeout (WEBHOOK_TIMEOUT_SECONDS, at most 60 s); this only catches a lost worker.
  startToCloseTimeout: '2m',
  scheduleToCloseTimeout: `${retry.giveUpSeconds}s`,
  retry: {
    initialInterval: `${retry.initialSeconds}s`,
    backoffCoefficient: 2,
    maximumInterval: `${retry.maxSeconds}s`,
    nonRetryableErrorTypes: [ENDPOINT_GONE],
  },
});

/**
 * The options of a batched delivery's attempts after the batch's first one
 * (started `retry.initialSeconds` after it): the same schedule continued, so
 * the second attempt's successor waits initial × 2, and the same 24 h from the first.
 */
export const laterAttemptOptions = (retry: DeliveryRetry): ActivityOptions =>
  attemptOptions({
    initialSeconds: Math.min(retry.initialSeconds * 2, retry.maxSeconds),
    maxSeconds: retry.maxSeconds,
    giveUpSeconds: Math.max(1, retry.giveUpSeconds - retry.initialSeconds),
  });

/** The batch's first attempt: every delivery POSTed once, concurrently; not retried as a whole. */
export const FIRST_ATTEMPT_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '2m',
  retry: { maximumAttempts: 1 },
};
