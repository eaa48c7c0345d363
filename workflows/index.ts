/**
 * Every workflow the worker runs, exported under its Temporal workflow type
 * (the `workflowType` of its entry in core/workflows/registry.ts).
 * This file is the root of the workflow bundle: it and what it imports run in
 * Temporal's deterministic sandbox — activity types only, no I/O.
 */
export { sendWelcomeEmail } from './send-welcome-email.ts';
export { sendEmailReceivedEin } from './send-email-received-ein.ts';
export { deliverWebhook } from './deliver-webhook.ts';
export { deliverWebhooks } from './deliver-webhooks.ts';
// Started by the gateway for each email with `send_at`, not through the trigger registry.
export { sendScheduledEmail } from './scheduled-send.ts';
