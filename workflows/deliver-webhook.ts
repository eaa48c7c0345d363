import { proxyActivities, rootCause } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import { ENDPOINT_GONE, type DeliverWebhookInput } from '../core/webhooks/delivery-workflow.ts';
import { DATABASE_STEP } from './retry-policy.ts';

const { failWebhookDelivery } = proxyActivities<Activities>(DATABASE_STEP);

/**
 * deliverWebhook: one event to one endpoint. Each attempt is an activity
 * attempt (the Web UI shows its count and last failure); Temporal retries it
 * with exponential backoff (initial, ×2, at most the maximum: WEBHOOK_RETRY_*)
 * until one gets a 2xx or `giveUpSeconds` have passed since the first, then
 * the delivery is marked failed and the run fails with the last error.
 */
export async function deliverWebhook(input: DeliverWebhookInput): Promise<'delivered'> {
  const { attemptWebhookDelivery } = proxyActivities<Activities>({
    // The POST has its own timeout (WEBHOOK_TIMEOUT_SECONDS, at most 60 s); this only catches a lost worker.
    startToCloseTimeout: '2m',
    scheduleToCloseTimeout: `${input.retry.giveUpSeconds}s`,
    retry: {
      initialInterval: `${input.retry.initialSeconds}s`,
      backoffCoefficient: 2,
      maximumInterval: `${input.retry.maxSeconds}s`,
      nonRetryableErrorTypes: [ENDPOINT_GONE],
    },
  });
  try {
    await attemptWebhookDelivery(input.deliveryKey);
    return 'delivered';
  } catch (err) {
    await failWebhookDelivery(input.deliveryKey, rootCause(err) ?? 'delivery failed');
    throw err;
  }
}
