import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Config } from '../config.ts';
import { companyPriority } from '../workflows/fairness.ts';
import { COMPANY_ID } from '../workflows/search-attributes.ts';
import {
  DELIVER_WEBHOOK_WORKFLOW,
  DELIVER_WEBHOOKS_WORKFLOW,
  batchWorkflowId,
  deliveryWorkflowId,
  type BatchedDelivery,
  type DeliverWebhookInput,
  type DeliverWebhooksInput,
  type DeliveryRetry,
  webhookTaskQueue,
} from './delivery-workflow.ts';

export interface DeliveryTarget {
  deliveryKey: string;
  endpointId: string;
  eventId: string;
  companyId: string;
}

/** Starts a delivery's run; 'running' when one runs already (a replay must wait for it). */
export type StartDelivery = (
  target: DeliveryTarget,
  options?: { replay?: boolean },
) => Promise<'started' | 'running'>;

/** Starts the run of a batch of one endpoint's new deliveries (relay.ts creates them first). */
export type StartBatch = (
  endpoint: { key: string; id: string; companyId: string; version: number },
  deliveries: BatchedDelivery[],
) => Promise<void>;

const retryOf = (config: Config): DeliveryRetry => ({
  initialSeconds: config.webhooks.retryInitialSeconds,
  maxSeconds: config.webhooks.retryMaxSeconds,
  giveUpSeconds: config.webhooks.giveUpSeconds,
});

/**
 * One `deliverWebhooks` run per batch, named by the endpoint and the batch's
 * first event. Only the process that created a batch's deliveries starts it,
 * so the id is never taken by another batch; starting it twice starts nothing.
 */
export function temporalBatchStarter(client: () => Client | undefined, config: Config): StartBatch {
  return async (endpoint, deliveries) => {
    const temporal = client();
    if (!temporal) throw new Error('Temporal client not connected');
    const input: DeliverWebhooksInput = {
      endpointKey: endpoint.key,
      endpointVersion: endpoint.version,
      deliveries,
      retry: retryOf(config),
    };
    try {
      await temporal.workflow.start(DELIVER_WEBHOOKS_WORKFLOW, {
        taskQueue: webhookTaskQueue(config.temporal.taskQueue),
        workflowId: batchWorkflowId(endpoint.id, deliveries[0]!.eventId),
        args: [input],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        typedSearchAttributes: [{ key: COMPANY_ID, value: endpoint.companyId }],
        ...companyPriority(endpoint.companyId),
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  };
}

/**
 * The run of one delivery on Temporal, searchable by CompanyId in the Web UI.
 * Used for an event handed over again (its delivery existed: its batch may or
 * may not have started), which never reuses an id, and for a replay (POST …/retry, only for a delivery that
 * ended) starts a new run under the same id.
 */
export function temporalDeliveryStarter(client: () => Client | undefined, config: Config): StartDelivery {
  return async (target, options = {}) => {
    const temporal = client();
    if (!temporal) throw new Error('Temporal client not connected');
    const input: DeliverWebhookInput = { deliveryKey: target.deliveryKey, retry: retryOf(config) };
    try {
      await temporal.workflow.start(DELIVER_WEBHOOK_WORKFLOW, {
        taskQueue: webhookTaskQueue(config.temporal.taskQueue),
        workflowId: deliveryWorkflowId(target.endpointId, target.eventId),
        args: [input],
        workflowIdReusePolicy: options.replay ? 'ALLOW_DUPLICATE' : 'REJECT_DUPLICATE',
        // A replay is asked for a delivery that ended: a run of it still open is only recording its end.
        ...(options.replay ? { workflowIdConflictPolicy: 'TERMINATE_EXISTING' as const } : {}),
        typedSearchAttributes: [{ key: COMPANY_ID, value: target.companyId }],
        ...companyPriority(target.companyId),
      });
      return 'started';
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) return 'running';
      throw err;
    }
  };
}
