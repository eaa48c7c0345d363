import { ApplicationFailure, Context } from '@temporalio/activity';
import {
  ENDPOINT_GONE,
  type Webhooks,
  type WorkflowEventData,
  type WorkflowEventType,
} from '../core/webhooks/index.ts';

/**
 * The activities of outbound webhooks: one delivery attempt (retried by the
 * run's policy, so each attempt is visible in the Web UI with its error), the
 * end of a delivery that gave up, and the event of a company's run ending.
 */
export function createWebhookActivities(deps: { webhooks: Webhooks }) {
  const { webhooks } = deps;
  return {
    /** One POST of the delivery; throws (retryable) unless the endpoint answered 2xx. */
    async attemptWebhookDelivery(deliveryKey: string): Promise<void> {
      const result = await webhooks.attempt(deliveryKey, Context.current().info.attempt);
      if (result.outcome === 'delivered') return;
      if (result.outcome === 'gone') throw ApplicationFailure.nonRetryable(result.why, ENDPOINT_GONE);
      throw ApplicationFailure.retryable(result.why, 'WebhookAttemptFailed');
    },

    /** The delivery gave up (24 h of retries, or its endpoint is gone): `failed`, with why. */
    async failWebhookDelivery(deliveryKey: string, why: string): Promise<void> {
      await webhooks.deliveries.fail(deliveryKey, why);
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
