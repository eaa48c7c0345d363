import type { Logger } from '../../logger.ts';
import { RUN_CANCELLED } from '../email-messages.ts';
import type { StepSendKeys } from '../idempotency/step-send-keys.ts';
import type { RecordStore } from '../records/record-store.ts';
import { callOffPendingSend } from './send-lease.ts';

/**
 * What became of a cancelled run's email: `called_off` (it is `failed` now),
 * `sending` (an attempt holds it, or one died mid-call: the provider may have
 * it), `finished` (sent or failed already), `none` (no attempt wrote a record).
 */
export type CallOffOutcome = 'called_off' | 'sending' | 'finished' | 'none';

/**
 * A workflow run was cancelled while its email step waited between attempts
 * (or before its first wrote anything): its email must not stay `pending`
 * until the sweeper, 15 minutes later. Called off under the send key's lease
 * (send-lease.ts): a record still pending with no attempt that may have
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
  const called = await callOffPendingSend(deps, idempotencyKey, await deps.records.findById(emailId), {
    reason: RUN_CANCELLED,
    kind: 'transient',
  });
  switch (called.outcome) {
    case 'called_off':
      deps.logger.info(
        { email_id: emailId, idempotency_key: idempotencyKey },
        'email called off: its workflow run was cancelled',
      );
      return 'called_off';
    case 'settled':
      return 'finished';
    case 'gone':
      return 'none';
    case 'sending':
      return 'sending';
  }
}
