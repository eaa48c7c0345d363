import { STATUS_RANK, type EmailRecord } from '../../core/email/records/record.ts';
import { newViewKey } from '../../core/email/tracking/view-key.ts';

/**
 * An invoice email record as a send stores it (core/email/record.ts): what
 * the pixel bench seeds and what the send floor inserts, so the database
 * does the same work as for a real send.
 */
export function invoiceRecord(fields: {
  emailId: string;
  to: string;
  subject: string;
  status: 'pending' | 'sent';
  providerId: string | null;
}): EmailRecord {
  const now = new Date();
  return {
    _id: fields.emailId,
    email_id: fields.emailId,
    created_at: now,
    updated_at: now,
    subject: fields.subject,
    recipient_email: fields.to,
    recipient_name: '',
    recipients: { to: [{ email: fields.to }], cc: [], bcc: [] },
    status_rank: STATUS_RANK[fields.status],
    template_id: 'invoice',
    opened: false,
    delivered: false,
    clicked: false,
    view_key: newViewKey(fields.emailId),
    resource_type_ref: null,
    resource_id_ref: null,
    time: null,
    company_id: null,
    organization_id: null,
    user_id: null,
    provider_id: fields.providerId,
    error: null,
    error_kind: null,
    tags: [],
    locale: 'en',
    language: 'en',
  };
}
