import { MailroomError, isMailroomError } from '../../errors.ts';
import type { Logger } from '../../logger.ts';
import { emailsFailed } from '../../metrics.ts';
import type { StepSendKeys } from '../idempotency/step-send-keys.ts';
import { OUTCOME_PENDING, OUTCOME_UNKNOWN, providerUnavailable } from '../email-messages.ts';
import type { RecordStore } from '../records/record-store.ts';

export interface ProviderFailureDeps {
  records: RecordStore;
  keys: StepSendKeys;
  logger: Logger;
}

/**
 * What a failed provider call leaves behind, and what the caller gets
 * (always thrown):
 * - a keyed (workflow) send that may be tried again (`transient`, an
 *   unknown outcome, or every provider at its rate) stays pending, its lease
 *   given back, and the activity retries it: a retryable `transient` failure,
 *   after the rate's wait when that was the reason. An unknown outcome keeps
 *   the attempt mark: the retry will not resend (send-claim.ts).
 * - an HTTP send with an unknown outcome is failed as such; it is not retried here.
 * - anything else fails the record with the provider's reason.
 * `giveBack` returns the send to the company's daily quota when the provider
 * certainly does not have it.
 */
export async function failProviderCall(
  deps: ProviderFailureDeps,
  err: unknown,
  send: { emailId: string; templateId: string; key: string | undefined },
  giveBack: (() => Promise<void>) | undefined,
): Promise<never> {
  const { records, keys, logger } = deps;
  const { emailId, templateId, key } = send;
  const failure = isMailroomError(err)
    ? err
    : new MailroomError('transient', providerUnavailable(String((err as Error)?.message ?? err)), {
        cause: err,
      });
  emailsFailed.inc({ template: templateId, kind: failure.kind });
  logger.warn({ email_id: emailId, kind: failure.kind, reason: failure.message }, 'email send failed');
  const retried = ['transient', 'outcome_unknown', 'rate_limited'].includes(failure.kind);
  if (key !== undefined && retried) {
    const known = failure.kind !== 'outcome_unknown';
    await records.noteAttemptFailed(emailId, failure.message, failure.kind, known);
    await keys.releaseAttempt(key);
    if (failure.kind === 'transient') throw failure;
    throw known
      ? new MailroomError('transient', failure.message, {
          cause: failure,
          ...(failure.retryAfterSeconds === undefined
            ? {}
            : { retryAfterSeconds: failure.retryAfterSeconds }),
        })
      : new MailroomError('transient', OUTCOME_PENDING, { cause: failure });
  }
  if (failure.kind === 'outcome_unknown') {
    const detail = `${OUTCOME_UNKNOWN} (${failure.message})`;
    await records.markFailed(emailId, detail, failure.kind);
    throw new MailroomError('outcome_unknown', detail, { cause: failure });
  }
  await giveBack?.().catch(() => undefined);
  await records.markFailed(emailId, failure.message, failure.kind);
  // The provider refused it: the attempt is over (a reset run may send it again at once).
  if (key !== undefined) await keys.releaseAttempt(key).catch(() => undefined);
  throw failure;
}
