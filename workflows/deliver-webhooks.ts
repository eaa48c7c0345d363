import { proxyActivities, rootCause } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { DeliverWebhooksInput } from '../core/webhooks/delivery-workflow.ts';
import { attemptOptions } from './deliver-webhook-policy.ts';
import { DATABASE_STEP } from './retry-policy.ts';

const { failWebhookDeliveries } = proxyActivities<Activities>(DATABASE_STEP);

/**
 * deliverWebhooks: a batch of one endpoint's new deliveries in one run (a run
 * per event cost a workflow start and two workflow tasks each). Every
 * delivery is still its own activity, named by its event id, with the
 * retry schedule of attemptOptions: the Web UI shows each one's attempts and
 * last failure, and a slow one delays no other. Deliveries that gave up are
 * marked failed together; the run completes with the counts.
 */
export async function deliverWebhooks(
  input: DeliverWebhooksInput,
): Promise<{ delivered: number; failed: number }> {
  const failed: Array<{ deliveryKey: string; why: string }> = [];
  await Promise.all(
    input.deliveries.map(async (delivery) => {
      const { attemptBatchedWebhook } = proxyActivities<Activities>({
        ...attemptOptions(input.retry),
        activityId: delivery.eventId,
      });
      try {
        await attemptBatchedWebhook({
          ...delivery,
          endpointKey: input.endpointKey,
          endpointVersion: input.endpointVersion,
        });
      } catch (err) {
        failed.push({ deliveryKey: delivery.deliveryKey, why: rootCause(err) ?? 'delivery failed' });
      }
    }),
  );
  if (failed.length > 0) await failWebhookDeliveries(failed);
  return { delivered: input.deliveries.length - failed.length, failed: failed.length };
}
