/**
 * What the gateway or worker hands Temporal for one delivery, and what the
 * `deliverWebhook` workflow (workflows/deliver-webhook.ts) takes: plain data,
 * importable from the workflow sandbox.
 */
export const DELIVER_WEBHOOK_WORKFLOW = 'deliverWebhook';

export interface DeliverWebhookInput {
  /** The delivery's `_id` in `webhook_deliveries`. */
  deliveryKey: string;
  /** The retry schedule (WEBHOOK_RETRY_* configuration), fixed when the delivery starts. */
  retry: { initialSeconds: number; maxSeconds: number; giveUpSeconds: number };
}

/** One run per event and endpoint: a second hand-over of the same event starts nothing. */
export const deliveryWorkflowId = (endpointId: string, eventId: string) => `webhook-${endpointId}-${eventId}`;

/** An attempt that must not be retried: the endpoint is gone or disabled. */
export const ENDPOINT_GONE = 'WebhookEndpointGone';
