import { proxyActivities, rootCause, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type {
  BatchedDelivery,
  DeliverWebhooksInput,
  FirstAttempt,
} from '../core/webhooks/delivery-workflow.ts';
import { FIRST_ATTEMPT_OPTIONS, laterAttemptOptions } from './deliver-webhook-policy.ts';
import { DATABASE_STEP } from './retry-policy.ts';

const { failWebhookDeliveries } = proxyActivities<Activities>(DATABASE_STEP);
const { attemptWebhookBatch } = proxyActivities<Activities>(FIRST_ATTEMPT_OPTIONS);

/**
 * deliverWebhooks: a batch of one endpoint's new deliveries in one run (a run
 * per event cost a workflow start, an activity and two workflow tasks each).
 * One activity makes every delivery's first attempt (its result lists each
 * event id's outcome); each delivery that got no 2xx then gets its own
 * activity, named by its event id, that continues the retry schedule (the
 * Web UI shows its attempts and last failure; a slow one delays no other).
 * Deliveries that gave up are marked failed together; the run completes
 * with the counts.
 */
export async function deliverWebhooks(
  input: DeliverWebhooksInput,
): Promise<{ delivered: number; failed: number }> {
  const { endpointKey, endpointVersion } = input;
  let first: FirstAttempt[];
  try {
    first = await attemptWebhookBatch(input);
  } catch {
    // The batch activity was lost (a worker died mid-way): every delivery goes on alone.
    first = input.deliveries.map((d) => ({ eventId: d.eventId, outcome: 'retry' }));
  }
  const failed: Array<{ deliveryKey: string; why: string }> = [];
  const retried: BatchedDelivery[] = [];
  input.deliveries.forEach((delivery, i) => {
    const result = first[i];
    if (result?.outcome === 'gone')
      failed.push({ deliveryKey: delivery.deliveryKey, why: result.why ?? 'gone' });
    else if (result?.outcome !== 'delivered') retried.push(delivery);
  });
  if (retried.length > 0) {
    await sleep(`${input.retry.initialSeconds}s`);
    await Promise.all(
      retried.map(async (delivery) => {
        const { attemptBatchedWebhook } = proxyActivities<Activities>({
          ...laterAttemptOptions(input.retry),
          activityId: delivery.eventId,
        });
        try {
          await attemptBatchedWebhook({ ...delivery, endpointKey, endpointVersion, attemptsBefore: 1 });
        } catch (err) {
          failed.push({ deliveryKey: delivery.deliveryKey, why: rootCause(err) ?? 'delivery failed' });
        }
      }),
    );
  }
  if (failed.length > 0) await failWebhookDeliveries(failed);
  return { delivered: input.deliveries.length - failed.length, failed: failed.length };
}
