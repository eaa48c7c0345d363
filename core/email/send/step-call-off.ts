import type { Logger } from '../../logger.ts';
import { RUN_CANCELLED } from '../email-messages.ts';
import type { StepSendKeys } from '../idempotency/step-send-keys.ts';
import { STATUS_RANK, type EmailRecord } from '../records/record.ts';
import type { RecordStore } from '../records/record-store.ts';
import { underSendLease } from './send-lease.ts';

/**
 * What became of a cancelled run's email: `called_off` (it is `failed` now),
 * `sending` (an attempt holds it, or one died mid-call: the provider may have
 * it), `finished` (sent or failed already), `none` (no attempt wrote a record).
 */
export type CallOffOutcome = 'called_off' | 'sending' | 'finished' | 'none';

/**
 * A workflow run was cancelled while its email step waited between attempts
 * (or before its first wrote anything): its email must not stay `pending`
 * until the sweeper, 15 minutes later. Under the send key's lease
 * (send-lease.ts), a record still pending with no attempt that may have
 * reached the provider becomes `failed`, error RUN_CANCELLED, kind
 * `transient`: the provider never had it, so a reset of the run sends it
 * (send-claim.ts reopens it), and for the welcome email a new run for the
 * same user sends a new one. A send in flight is left to finish: it ends
 * `sent`, or the sweeper explains it.
 */
export async function callOffStepSend(
  deps: { records: RecordStore; keys: StepSendKeys; logger: Logger },
  idempotencyKey: string,
): Promise<CallOffOutcome> {
  const emailId = await deps.keys.findEmailId(idempotencyKey);
  if (emailId === undefined) return 'none';
  const stateOf = (record: EmailRecord | null) =>
    !record ? 'none' : record.status_rank !== STATUS_RANK.pending ? 'finished' : undefined;
  // A finished send keeps its lease until it expires: answered without it.
  const before = stateOf(await deps.records.findById(emailId));
  if (before) return before;
  return underSendLease(deps.keys, idempotencyKey, async () => {
    // Read again under the lease: an attempt may have finished in between.
    const record = await deps.records.findById(emailId);
    const state = stateOf(record);
    if (state || !record) return state ?? 'none';
    if (record.attempt_id) return 'sending';
    if (!(await deps.records.markFailed(emailId, RUN_CANCELLED, 'transient'))) return 'finished';
    deps.logger.info(
      { email_id: emailId, idempotency_key: idempotencyKey },
      'email called off: its workflow run was cancelled',
    );
    return 'called_off';
  });
}
