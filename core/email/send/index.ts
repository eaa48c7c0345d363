/**
 * The send part of the email core: the pipeline one message goes through (claim, render with
 * suppressions, provider call, record), bulk sends, attachments, and the providers behind it.
 * Code outside this folder imports it from here (npm run layers enforces it).
 */
export { createAttachmentFetcher, resolveAttachments } from './attachments.ts';
export type { AttachmentFetcher } from './attachments.ts';
export { sendBulk } from './bulk.ts';
export { defaultSender } from './provider.ts';
export type { MailProvider } from './provider.ts';
export { createProviders } from './providers/index.ts';
export { createSendPipeline } from './send-pipeline.ts';
export { asksToSchedule } from './send-at.ts';
export { createScheduledSends } from './scheduled-sends.ts';
export type { ScheduledSendsApi } from './scheduled-sends.ts';
export { callOffStepSend } from './step-call-off.ts';
export type { CallOffOutcome } from './step-call-off.ts';
export {
  CancelScheduledResponseSchema,
  SCHEDULED_PAGE_DEFAULT,
  SCHEDULED_PAGE_MAX,
  ScheduledListResponseSchema,
} from './scheduled-schema.ts';
export type { ScheduledPosition } from './scheduled-store.ts';
export { createTestProvider } from './providers/test-mode.ts';
export { captureToDevInbox } from './providers/test-capture.ts';
export { createDailyQuotas } from './quotas/daily-quota.ts';
export { BULK_RATE_WAIT_MS } from './quotas/rate-gate.ts';
export type { QuotaStatus } from './quotas/quota-schema.ts';
export { runQuotaCommand } from './quotas/quota-command.ts';
export { QuotaResponseSchema } from './quotas/quota-schema.ts';
export { createSenderPolicy } from './senders/sender-policy.ts';
export { runSendersCommand } from './senders/senders-command.ts';
