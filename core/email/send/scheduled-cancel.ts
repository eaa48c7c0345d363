import { MailroomError } from '../../errors.ts';
import { checkIdentity, isUuid, withinReach, type Principal } from '../../identity.ts';
import type { Logger } from '../../logger.ts';
import { scheduledSendKey } from '../../workflows/scheduled-send.ts';
import {
  ALREADY_SENT,
  BEING_SENT,
  CANCELLED,
  SCHEDULED_EMAIL_NOT_FOUND,
  alreadyFailed,
} from '../email-messages.ts';
import type { StepSendKeys } from '../idempotency/step-send-keys.ts';
import { STATUS_RANK, type EmailRecord } from '../records/record.ts';
import type { RecordStore } from '../records/record-store.ts';
import type { ScheduledStore } from './scheduled-store.ts';
import { callOffPendingSend } from './send-lease.ts';

/**
 * Cancelling a scheduled email, and its race with the send.
 *
 * Both sides go through the email's send key (step-send-keys.ts): the send
 * step may call the provider only while it holds the key's attempt lease,
 * and cancelling takes the same lease before it fails the record. So either
 * the cancel holds it, fails the record `failed` / error `cancelled` (kind
 * `cancelled`, which nothing reopens: record.ts failedBeforeHandOver) and the
 * send step, when it gets the lease, finds the record finished and sends
 * nothing; or the send holds it and the cancel answers 409 "being sent".
 * One outcome, never both.
 */

export type CancelOutcome = 'cancelled' | 'sent' | 'failed' | 'sending' | 'not_found';

export interface CancelDeps {
  records: RecordStore;
  keys: StepSendKeys;
  store: ScheduledStore;
  logger: Logger;
}

/** What became of a record no longer pending, for a cancel. */
function fateOf(record: EmailRecord): CancelOutcome {
  if (record.error_kind === 'cancelled') return 'cancelled';
  return record.status_rank === STATUS_RANK.failed ? 'failed' : 'sent';
}

/**
 * A scheduled email is the caller's to cancel when its company's (and, for a
 * key bound to an organization, that organization's) and of the same mode
 * (test or live). Anything else is answered as if it did not exist.
 */
function visibleTo(record: EmailRecord, principal: Principal): boolean {
  const companyId = principal.authenticated ? checkIdentity(principal.caller)?.companyId : undefined;
  return (
    companyId !== undefined &&
    withinReach(
      { companyId: record.company_id, organizationId: record.organization_id },
      { companyId, boundOrganizationId: principal.boundOrganizationId },
    ) &&
    (record.test === true) === (principal.test === true)
  );
}

/**
 * Cancels scheduled email `emailId` if it is still pending. With a
 * principal (the DELETE route): another company's or an unknown email is
 * not_found (404), one sent or being sent a conflict (409), one failed
 * otherwise a conflict naming why; cancelling twice is fine. Without (the
 * run was cancelled): the outcome, never an error.
 */
export async function cancelScheduled(
  deps: CancelDeps,
  emailId: string,
  principal: Principal | undefined,
): Promise<CancelOutcome> {
  const found = isUuid(emailId) ? await deps.records.findById(emailId.toLowerCase()) : null;
  const visible = found?.send_at !== undefined && (!principal || visibleTo(found, principal));
  const outcome = visible ? await cancelRecord(deps, found) : 'not_found';
  if (outcome === 'cancelled') await deps.store.remove(found!.email_id);
  if (!principal) return outcome;
  switch (outcome) {
    case 'not_found':
      throw new MailroomError('not_found', SCHEDULED_EMAIL_NOT_FOUND);
    case 'sent':
      throw new MailroomError('conflict', ALREADY_SENT);
    case 'sending':
      throw new MailroomError('conflict', BEING_SENT);
    case 'failed':
      throw new MailroomError(
        'conflict',
        alreadyFailed((await deps.records.findById(found!.email_id))?.error ?? null),
      );
    default:
      return outcome;
  }
}

async function cancelRecord(deps: CancelDeps, record: EmailRecord): Promise<CancelOutcome> {
  const called = await callOffPendingSend(deps, scheduledSendKey(record.email_id), record, {
    reason: CANCELLED,
    kind: 'cancelled',
  });
  switch (called.outcome) {
    case 'called_off':
      deps.logger.info({ email_id: record.email_id }, 'scheduled email cancelled');
      return 'cancelled';
    case 'settled':
      return fateOf(called.record);
    case 'gone':
      return 'not_found';
    case 'sending':
      return 'sending';
  }
}
