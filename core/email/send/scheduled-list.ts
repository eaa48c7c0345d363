import { checkIdentity, type Principal } from '../../identity.ts';
import { MailroomError } from '../../errors.ts';
import { UNAUTHORIZED } from '../../identity.ts';
import { STATUS_RANK } from '../records/record.ts';
import type { RecordStore } from '../records/record-store.ts';
import type { ScheduledEmail } from './scheduled-schema.ts';
import type { ScheduledPosition, ScheduledStore } from './scheduled-store.ts';

export interface ScheduledPage {
  data: ScheduledEmail[];
  /** Where the next page starts; undefined on the last page. */
  next: ScheduledPosition | undefined;
}

/**
 * A page of the caller's company's scheduled emails still pending, by
 * send_at then email id: those of its organization only for a key bound to
 * one, test ones only for a test key. Each is read from its record (by
 * `_id`), so an email sent or cancelled a moment ago is left out; a page may
 * then hold fewer than `limit` while `next` still says there is more.
 */
export async function listScheduled(
  deps: { records: RecordStore; store: ScheduledStore },
  principal: Principal,
  after: ScheduledPosition | undefined,
  limit: number,
): Promise<ScheduledPage> {
  const companyId = principal.authenticated ? checkIdentity(principal.caller)?.companyId : undefined;
  if (companyId === undefined) throw new MailroomError('unauthorized', UNAUTHORIZED);
  const owner = { companyId, organizationId: principal.boundOrganizationId, test: principal.test === true };
  const docs = await deps.store.page(owner, after, limit);
  const records = await Promise.all(docs.map((doc) => deps.records.findById(doc._id)));
  const data = records.flatMap((record, i): ScheduledEmail[] =>
    record && record.status_rank === STATUS_RANK.pending
      ? [
          {
            email_id: record.email_id,
            send_at: docs[i]!.send_at.toISOString(),
            created_at: record.created_at.toISOString(),
            subject: record.subject,
            recipient_email: record.recipient_email,
            recipient_name: record.recipient_name,
            template_id: record.template_id,
            status: 'pending',
          },
        ]
      : [],
  );
  const last = docs.at(-1);
  return {
    data,
    next: docs.length === limit && last ? { sendAt: last.send_at, emailId: last._id } : undefined,
  };
}
