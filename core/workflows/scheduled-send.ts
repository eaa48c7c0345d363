/**
 * The scheduled-send workflow's names, shared by the gateway (which starts it),
 * the email core (whose exactly-once key it uses) and the workflow itself.
 * Not in the trigger registry (registry.ts): callers schedule an email with
 * `send_at` on POST /api/email/send or /bulk, never by starting this workflow.
 */

/** The workflow function's name in workflows/index.ts: Temporal's workflow type. */
export const SCHEDULED_SEND_WORKFLOW_TYPE = 'sendScheduledEmail';

/**
 * One run per scheduled email, its id derived from the email's: starting it a
 * second time (the gateway, then the outbox) finds the first and starts nothing.
 */
export const scheduledRunId = (emailId: string): string => `scheduled-email-${emailId}`;

/**
 * The email's exactly-once send key (core/email/idempotency/step-send-keys.ts),
 * reserved for the record when it is scheduled: however often the run's send
 * step is retried or replayed, and whoever cancels it meanwhile, it is sent once.
 */
export const scheduledSendKey = (emailId: string): string => `${scheduledRunId(emailId)}:send`;

/** The run's input: which email, and when (RFC 3339, UTC). */
export interface ScheduledSendInput {
  emailId: string;
  sendAt: string;
}

/** What the run ends with: the email's fate as its record says. */
export interface ScheduledSendResult {
  emailId: string;
  status: 'sent' | 'failed' | 'cancelled';
  providerId?: string;
  error?: string;
}
