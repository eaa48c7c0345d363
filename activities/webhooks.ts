import { ApplicationFailure, Context } from '@temporalio/activity';
import pLimit from 'p-limit';
import type { AttemptResult } from '../core/webhooks/attempt-delivery.ts';
import {
  ENDPOINT_GONE,
  type BatchedAttempt,
  type DeliverWebhooksInput,
  type FirstAttempt,
  type Webhooks,
  type WorkflowEventData,
  type WorkflowEventType,
} from '../core/webhooks/index.ts';

/** First-attempt POSTs in flight at once to one endpoint, from one worker (all its batches). */
export const BATCH_POSTS_AT_ONCE = 50;

/**
 * The activities of outbound webhooks: one delivery attempt (retried by the
 * run's policy, so each attempt is visible in the Web UI with its error), the
 * end of a delivery that gave up, and the event of a company's run ending.
 */
export function createWebhookActivities(deps: { webhooks: Webhooks }) {
  const { webhooks } = deps;
  /** Each endpoint's limit while it has batches under way here (then dropped: none is kept for ever). */
  const limits = new Map<string, { limit: pLimit.Limit; batches: number }>();
  return {
    /** One POST of the delivery; throws (retryable) unless the endpoint answered 2xx. */
    async attemptWebhookDelivery(deliveryKey: string): Promise<void> {
      settle(await webhooks.attempt(deliveryKey, Context.current().info.attempt));
    },

    /**
     * The first attempt of every delivery of a batch, at most
     * BATCH_POSTS_AT_ONCE at a time to its endpoint with the other batches of
     * that endpoint on this worker (a receiver is never sent whole batches at
     * once, and each POST's timeout runs from its own start); never throws
     * for a delivery's sake.
     */
    async attemptWebhookBatch(batch: DeliverWebhooksInput): Promise<FirstAttempt[]> {
      const { endpointKey, endpointVersion } = batch;
      const shared = limits.get(endpointKey) ?? { limit: pLimit(BATCH_POSTS_AT_ONCE), batches: 0 };
      limits.set(endpointKey, shared);
      shared.batches++;
      const { limit } = shared;
      try {
        return await Promise.all(
          batch.deliveries.map(async (delivery) => {
            const result = await limit(() =>
              webhooks
                .attemptBatched({ ...delivery, endpointKey, endpointVersion, attemptsBefore: 0 }, 1)
                // A database error is this delivery's failed attempt, not the batch's.
                .catch((err: unknown) => ({ outcome: 'retry' as const, why: (err as Error).message })),
            );
            return result.outcome === 'delivered'
              ? { eventId: delivery.eventId, outcome: result.outcome }
              : { eventId: delivery.eventId, outcome: result.outcome, why: result.why };
          }),
        );
      } finally {
        if (--shared.batches === 0) limits.delete(endpointKey);
      }
    },

    /** A later attempt of a delivery of a batch (its input carries the body). */
    async attemptBatchedWebhook(item: BatchedAttempt): Promise<void> {
      settle(await webhooks.attemptBatched(item, item.attemptsBefore + Context.current().info.attempt));
    },

    /** The delivery gave up (24 h of retries, or its endpoint is gone): `failed`, with why. */
    async failWebhookDelivery(deliveryKey: string, why: string): Promise<void> {
      await webhooks.deliveries.fail(deliveryKey, why);
    },

    /** Deliveries of a batch that gave up. */
    async failWebhookDeliveries(failed: Array<{ deliveryKey: string; why: string }>): Promise<void> {
      for (const { deliveryKey, why } of failed) await webhooks.deliveries.fail(deliveryKey, why);
    },

    /** `workflow.completed` / `failed` / `cancelled` for the run's company's endpoints. */
    async emitWorkflowEvent(
      type: WorkflowEventType,
      data: WorkflowEventData,
      testMode: boolean,
    ): Promise<void> {
      await webhooks.relay.emitWorkflowEvent(
        type,
        { companyId: data.company_id, organizationId: data.organization_id, test: testMode },
        data,
        new Date(),
      );
    },
  };
}

/** Returns for a 2xx; throws so that Temporal retries the attempt, or not when the endpoint is gone. */
function settle(result: AttemptResult): void {
  if (result.outcome === 'delivered') return;
  if (result.outcome === 'gone') throw ApplicationFailure.nonRetryable(result.why, ENDPOINT_GONE);
  throw ApplicationFailure.retryable(result.why, 'WebhookAttemptFailed');
}
