import type { SuppressionReason } from '../email-schema.ts';

/**
 * Which SendGrid Event Webhook events put the recipient on the company's
 * suppression list, and why:
 * - `bounce` of type `bounce` (a hard bounce; SendGrid's legacy events carry no
 *   type and are hard bounces too). Type `blocked` is a temporary refusal and
 *   suppresses nothing.
 * - `dropped` whose reason says SendGrid refused the address for one of the
 *   same causes (its own lists: "Bounced Address", "Spam Reporting Address",
 *   "Unsubscribed Address").
 * - `spamreport`, `unsubscribe` and `group_unsubscribe`.
 */
export interface WebhookEventFields {
  event?: unknown;
  type?: unknown;
  reason?: unknown;
}

const DROPPED_REASONS: Record<string, SuppressionReason> = {
  'bounced address': 'bounce',
  'spam reporting address': 'spam_report',
  'unsubscribed address': 'unsubscribe',
};

export function suppressionReasonOf(event: WebhookEventFields): SuppressionReason | undefined {
  switch (event.event) {
    case 'bounce':
      return event.type === undefined || event.type === 'bounce' ? 'bounce' : undefined;
    case 'dropped':
      return typeof event.reason === 'string'
        ? DROPPED_REASONS[event.reason.trim().toLowerCase()]
        : undefined;
    case 'spamreport':
      return 'spam_report';
    case 'unsubscribe':
    case 'group_unsubscribe':
      return 'unsubscribe';
    default:
      return undefined;
  }
}
