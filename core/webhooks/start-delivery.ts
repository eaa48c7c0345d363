import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Config } from '../config.ts';
import { COMPANY_ID } from '../workflows/search-attributes.ts';
import {
  DELIVER_WEBHOOK_WORKFLOW,
  deliveryWorkflowId,
  type DeliverWebhookInput,
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

/**
 * The run of one delivery on Temporal, searchable by CompanyId in the Web UI.
 * A first hand-over never reuses an id (a second relay handing the same event
 * over starts nothing); a replay (POST …/retry, only for a delivery that
 * ended) starts a new run under the same id.
 */
export function temporalDeliveryStarter(client: () => Client | undefined, config: Config): StartDelivery {
  return async (target, options = {}) => {
    const temporal = client();
    if (!temporal) throw new Error('Temporal client not connected');
    const input: DeliverWebhookInput = {
      deliveryKey: target.deliveryKey,
      retry: {
        initialSeconds: config.webhooks.retryInitialSeconds,
        maxSeconds: config.webhooks.retryMaxSeconds,
        giveUpSeconds: config.webhooks.giveUpSeconds,
      },
    };
    try {
      await temporal.workflow.start(DELIVER_WEBHOOK_WORKFLOW, {
        taskQueue: config.temporal.taskQueue,
        workflowId: deliveryWorkflowId(target.endpointId, target.eventId),
        args: [input],
        workflowIdReusePolicy: options.replay ? 'ALLOW_DUPLICATE' : 'REJECT_DUPLICATE',
        // A replay is asked for a delivery that ended: a run of it still open is only recording its end.
        ...(options.replay ? { workflowIdConflictPolicy: 'TERMINATE_EXISTING' as const } : {}),
        typedSearchAttributes: [{ key: COMPANY_ID, value: target.companyId }],
      });
      return 'started';
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) return 'running';
      throw err;
    }
  };
}
