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
