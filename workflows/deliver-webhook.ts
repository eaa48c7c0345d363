import { proxyActivities, rootCause } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { DeliverWebhookInput } from '../core/webhooks/delivery-workflow.ts';
import { attemptOptions } from './deliver-webhook-policy.ts';
import { DATABASE_STEP } from './retry-policy.ts';

const { failWebhookDelivery } = proxyActivities<Activities>(DATABASE_STEP);

/**
 * deliverWebhook: one event to one endpoint (a replay, or an event handed
 * over a second time; first hand-overs are batched by deliverWebhooks). Each
 * attempt is an activity attempt (the Web UI shows its count and last
 * failure), retried on the schedule of attemptOptions; when it gives up the
 * delivery is marked failed and the run fails with the last error.
 */
export async function deliverWebhook(input: DeliverWebhookInput): Promise<'delivered'> {
  const { attemptWebhookDelivery } = proxyActivities<Activities>(attemptOptions(input.retry));
  try {
    await attemptWebhookDelivery(input.deliveryKey);
    return 'delivered';
  } catch (err) {
    await failWebhookDelivery(input.deliveryKey, rootCause(err) ?? 'delivery failed');
    throw err;
  }
}
