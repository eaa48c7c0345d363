/**
 * What the gateway or worker hands Temporal for deliveries, and what the
 * `deliverWebhook` and `deliverWebhooks` workflows (workflows/deliver-webhook*.ts)
 * take: plain data, importable from the workflow sandbox.
 */
export const DELIVER_WEBHOOK_WORKFLOW = 'deliverWebhook';
export const DELIVER_WEBHOOKS_WORKFLOW = 'deliverWebhooks';

/**
 * The task queue of the delivery runs and their attempts (the POSTs), beside
 * the worker's own: a receiver that never answers holds a slot of this
 * queue's worker for its timeout, and a backlog of deliveries waits here,
 * never in front of the email steps, the runs or the scheduled sends
 * (worker/create-worker.ts runs both).
 */
export const webhookTaskQueue = (taskQueue: string): string => `${taskQueue}-webhooks`;

/** The retry schedule (WEBHOOK_RETRY_* configuration), fixed when the delivery starts. */
export interface DeliveryRetry {
  initialSeconds: number;
  maxSeconds: number;
  giveUpSeconds: number;
}

export interface DeliverWebhookInput {
  /** The delivery's `_id` in `webhook_deliveries`. */
  deliveryKey: string;
  retry: DeliveryRetry;
}

/** One delivery of a batch: everything an attempt needs besides the endpoint, so it reads nothing else. */
export interface BatchedDelivery {
  deliveryKey: string;
  eventId: string;
  /** The exact body (the same as the delivery document's). */
  payload: string;
}

/** A batch of one endpoint's new deliveries, handed over together: one run, one activity per delivery. */
export interface DeliverWebhooksInput {
  /** The endpoint's `_id` in `webhook_endpoints`. */
  endpointKey: string;
  /**
   * The endpoint's `updated_at` (ms) as the process handing over knew it: a
   * worker whose cached endpoint is older reads it again (a rotation or
   * change made through that process is never signed with stale secrets).
   */
  endpointVersion: number;
  deliveries: BatchedDelivery[];
  retry: DeliveryRetry;
}

/** The input of one attempt of a batched delivery. */
export interface BatchedAttempt extends BatchedDelivery {
  endpointKey: string;
  endpointVersion: number;
  /** Attempts made before this activity's first (the batch's first attempt): numbers its attempts. */
  attemptsBefore: number;
}

/** What a batch's first attempt did for one delivery (the batch activity's result, in the Web UI). */
export interface FirstAttempt {
  eventId: string;
  outcome: 'delivered' | 'retry' | 'gone';
  why?: string;
}

/** Deliveries per batch run at most. */
export const MAX_DELIVERIES_PER_RUN = 250;
/**
 * Bytes of event bodies per batch run at most: the run's input and its first
 * activity's are each kept whole in its history, and Temporal refuses a
 * payload over 2 MB (and warns over 512 KB) by default.
 */
export const MAX_RUN_PAYLOAD_BYTES = 256 * 1024;

/** One run per event and endpoint (replays, and events handed over a second time). */
export const deliveryWorkflowId = (endpointId: string, eventId: string) => `webhook-${endpointId}-${eventId}`;

/** A batch run, named by its endpoint and its first event (each delivery is in one batch only). */
export const batchWorkflowId = (endpointId: string, firstEventId: string) =>
  `webhooks-${endpointId}-${firstEventId}`;

/** An attempt that must not be retried: the endpoint is gone or disabled. */
export const ENDPOINT_GONE = 'WebhookEndpointGone';
