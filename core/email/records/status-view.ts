import { statusOf, type EmailRecord } from './record.ts';
import type { EmailStatus } from '../email-schema.ts';

/** The status-response fields of a record, nothing else (never view_key). */
export function toStatus(record: EmailRecord): EmailStatus {
  // A failed email says why: `cancelled` for a cancelled scheduled one, else the record's reason
  // (a caller whose answer was lost tells "outcome unknown", maybe sent, from "not sent").
  const error = record.error_kind === 'cancelled' ? 'cancelled' : record.error;
  return {
    email_id: record.email_id,
    created_at: record.created_at.toISOString(),
    subject: record.subject,
    recipient_email: record.recipient_email,
    recipient_name: record.recipient_name,
    status: statusOf(record),
    template_id: record.template_id,
    opened: record.opened,
    delivered: record.delivered,
    resource_type_ref: record.resource_type_ref,
    resource_id_ref: record.resource_id_ref,
    provider: record.provider ?? null,
    // A scheduled email says when (core/email/send/scheduled-sends.ts).
    ...(record.send_at ? { send_at: record.send_at.toISOString() } : {}),
    ...(statusOf(record) === 'failed' && error ? { error } : {}),
    ...(record.test === true ? { test: true as const } : {}),
  };
}
