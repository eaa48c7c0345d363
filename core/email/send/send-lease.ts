import type { ErrorKind } from '../../errors.ts';
import type { StepSendKeys } from '../idempotency/step-send-keys.ts';
import { STATUS_RANK, type EmailRecord } from '../records/record.ts';
import type { RecordStore } from '../records/record-store.ts';

/** Longer than calling a send off takes; released at once (a crashed caller's lease just expires). */
const CALL_OFF_LEASE_MS = 30_000;
/**
 * How long a call-off waits for a lease someone else holds. Another call-off
 * (the same cancel sent twice at once) holds it for a few milliseconds and
 * leaves the record settled; an attempt holds it for its provider call. Told
 * `sending` at once, seven of eight cancels sent together answered 409
 * "being sent" for an email they had in fact cancelled.
 */
const LEASE_WAIT_MS = 2_000;
const LEASE_POLL_MS = 50;

/**
 * What calling a send off found: `called_off` (its record is `failed` now),
 * `sending` (an attempt held the lease past the wait, or one died mid-call:
 * the provider may have it), `settled` (no longer pending: sent or failed), `gone` (no
 * record).
 */
export type CallOffResult =
  { outcome: 'called_off' | 'sending' | 'gone' } | { outcome: 'settled'; record: EmailRecord };

/**
 * Calls off the send keyed by `key`, whose record was read as `current`:
 * under the key's attempt lease (step-send-keys.ts), the lease a send attempt
 * must hold to call the provider, a record still pending that no attempt may
 * have handed over becomes `failed` with `failure`. While this holds the
 * lease no attempt can start, and an attempt holding it now makes the answer
 * `sending`: so a send and whatever calls it off (a cancelled scheduled
 * email, a cancelled workflow run) never both happen. A record already
 * settled keeps its lease until it expires, so it is answered without it.
 * A lease held by someone else is waited for, up to LEASE_WAIT_MS.
 */
export async function callOffPendingSend(
  deps: { keys: StepSendKeys; records: RecordStore },
  key: string,
  current: EmailRecord | null,
  failure: { reason: string; kind: ErrorKind },
): Promise<CallOffResult> {
  const settled = (record: EmailRecord | null): CallOffResult | undefined =>
    !record
      ? { outcome: 'gone' }
      : record.status_rank !== STATUS_RANK.pending
        ? { outcome: 'settled', record }
        : undefined;
  const before = settled(current);
  if (before || !current) return before ?? { outcome: 'gone' };
  const emailId = current.email_id;
  const waitUntil = Date.now() + LEASE_WAIT_MS;
  while (!(await deps.keys.claimAttempt(key, new Date(Date.now() + CALL_OFF_LEASE_MS)))) {
    // Held: answer from the record once its holder settled it, try again once it let go.
    if (Date.now() >= waitUntil) return { outcome: 'sending' };
    await new Promise((resolve) => setTimeout(resolve, LEASE_POLL_MS));
    const meanwhile = settled(await deps.records.findById(emailId));
    if (meanwhile) return meanwhile;
  }
  try {
    // Read again under the lease: an attempt may have finished in between.
    const now = await deps.records.findById(emailId);
    const state = settled(now);
    if (state || !now) return state ?? { outcome: 'gone' };
    // An attempt died mid-call: the provider may have it; not ours to call off.
    if (now.attempt_id) return { outcome: 'sending' };
    if (await deps.records.markFailed(emailId, failure.reason, failure.kind))
      return { outcome: 'called_off' };
    // Not pending any more: something else settled it between the read and the write.
    return settled(await deps.records.findById(emailId)) ?? { outcome: 'sending' };
  } finally {
    await deps.keys.releaseAttempt(key);
  }
}
