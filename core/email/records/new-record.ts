import type { Identity } from '../../identity.ts';
import { SENT_MESSAGE } from '../email-messages.ts';
import { STATUS_RANK, type EmailRecord } from './record.ts';
import type { SendResult, SkippedRecipient } from '../email-schema.ts';
import type { NormalizedSend } from '../validate.ts';
import { newViewKey } from '../tracking/view-key.ts';

/** What a send writes first and answers last: its new record, and the answer once accepted. */

/** The answer of a send the provider accepted (a test-mode send says so: `test: true`). */
export const answer = (
  emailId: string,
  providerId: string,
  skipped: SkippedRecipient[],
  test: boolean,
): SendResult => ({
  email_id: emailId,
  provider_id: providerId,
  message: SENT_MESSAGE,
  ...(skipped.length ? { suppressed: skipped } : {}),
  ...(test ? { test: true as const } : {}),
});

export type RecipientFields = ReturnType<typeof recipientFields>;
export type MessageFields = ReturnType<typeof messageFields>;

/** The record's recipient fields for the recipients a send actually goes to. */
export function recipientFields(input: Pick<NormalizedSend, 'to' | 'cc' | 'bcc'>) {
  const first = input.to[0];
  return {
    recipient_email: first?.email ?? '',
    recipient_name: first?.name ?? '',
    recipients: { to: input.to, cc: input.cc, bcc: input.bcc },
  };
}

/**
 * What a record says of its message: what the send asked for and whom it
 * goes to. A record an earlier attempt made takes these again from the
 * attempt that sends (a reset run's step after the user's address was
 * corrected sends to the new address, and its record says so).
 */
export function messageFields(input: NormalizedSend) {
  return {
    subject: input.subject,
    ...recipientFields(input),
    template_id: input.templateId,
    resource_type_ref: input.resourceTypeRef ?? null,
    resource_id_ref: input.resourceIdRef ?? null,
    tags: input.tags,
    locale: input.locale,
    language: input.language,
  };
}

/** A new pending record for a validated send. */
export function newRecord(
  input: NormalizedSend,
  identity: Identity,
  emailId: string,
  key: string | undefined,
  test: boolean,
): EmailRecord {
  const now = new Date();
  return {
    _id: emailId,
    email_id: emailId,
    created_at: now,
    updated_at: now,
    ...messageFields(input),
    status_rank: STATUS_RANK.pending,
    opened: false,
    delivered: false,
    clicked: false,
    view_key: newViewKey(emailId),
    time: null,
    company_id: identity.companyId ?? null,
    organization_id: identity.organizationId ?? null,
    user_id: identity.userId ?? null,
    provider_id: null,
    error: null,
    error_kind: null,
    ...(key === undefined ? {} : { idempotency_key: key }),
    ...(test ? { test: true } : {}),
  };
}
