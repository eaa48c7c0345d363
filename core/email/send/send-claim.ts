import { randomUUID } from 'node:crypto';
import { MailroomError } from '../../errors.ts';
import type { Identity } from '../../identity.ts';
import type { Logger } from '../../logger.ts';
import type { StepSendKeys } from '../idempotency/step-send-keys.ts';
import { IN_PROGRESS, OUTCOME_PENDING, OUTCOME_UNKNOWN } from '../email-messages.ts';
import { answer, newRecord } from '../records/new-record.ts';
import { STATUS_RANK, failedBeforeHandOver, isHandedOver, type EmailRecord } from '../records/record.ts';
import type { RecordStore } from '../records/record-store.ts';
import type { SendResult } from '../email-schema.ts';
import type { NormalizedSend } from '../validate.ts';

/**
 * How long a keyed attempt holds its record: longer than the provider's own
 * timeout (30 s), so only a crashed attempt's lease ever expires.
 */
const ATTEMPT_LEASE_MS = 60_000;

/**
 * How long after an attempt of unknown outcome began its retries wait for the
 * provider's events before failing the record. SendGrid's `processed` event
 * comes within seconds of acceptance; the email step's retries (1 s … 30 s
 * apart, 5 minutes in all) reach past this bound.
 */
export const OUTCOME_WAIT_MS = 60_000;

const leaseUntil = () => new Date(Date.now() + ATTEMPT_LEASE_MS);

/** The record a send writes to, and how it came to be this attempt's. */
export interface ClaimedRecord {
  record: EmailRecord;
  /** Made by this attempt: not in the database until the attempt marks it. */
  isNew: boolean;
  /**
   * A failed record this attempt made pending again (a reset run's step): a
   * new send as far as the company's daily limit goes, its first attempt's
   * count having been given back when the provider refused it.
   */
  reopened?: boolean;
}

export interface SendClaimDeps {
  records: RecordStore;
  keys: StepSendKeys;
  logger: Logger;
}

/**
 * Which record a send writes to, and whether it may call the provider at all:
 * a keyed send's attempt lease, the answer of a key already finished, a
 * failed step run again (a reset), and an earlier attempt of unknown outcome
 * (below).
 *
 * No keyed send is repeated blindly: the record carries the mark of the
 * attempt talking to the provider (`attempt_id`) from before the call until
 * its outcome is known. A retry that finds the mark still set (the attempt
 * died mid-call, or the provider timed out / dropped the connection after the
 * request was written) does not call the provider again. It waits for what
 * the provider says through its events (a `processed`, `delivered`, … event
 * moves the record on, and the retry answers from it) for OUTCOME_WAIT_MS
 * after the attempt began, then fails the record with OUTCOME_UNKNOWN, kind
 * `outcome_unknown`, not retryable: an operator decides. SendGrid's Mail Send
 * has no idempotency key, so this is the only safe choice; the window left is
 * a message accepted whose events never arrive: it is reported failed
 * although it went out (never the other way round).
 */
export function createSendClaim({ records, keys, logger }: SendClaimDeps) {
  /** The answer for a record the provider already accepted (idempotent replay). */
  const resultOf = (record: EmailRecord): SendResult =>
    answer(record.email_id, record.provider_id ?? '', record.suppressed ?? [], record.test === true);

  /** A record that is no longer pending answers every later attempt of its key. */
  function finished(record: EmailRecord): { done: SendResult } | undefined {
    if (isHandedOver(record)) return { done: resultOf(record) };
    if (record.status_rank === STATUS_RANK.failed)
      throw new MailroomError(
        record.error_kind ?? 'provider_rejected',
        record.error ?? 'email sending failed.',
      );
    return undefined;
  }

  /**
   * The record this send writes to. Without a key: a new one. With a key: the
   * one reserved for it, if a previous attempt created it; an attempt that
   * already reached the provider is answered from the record instead. Only
   * the holder of the key's attempt lease may create the record or call the
   * provider.
   */
  async function claimRecord(
    input: NormalizedSend,
    identity: Identity,
    key: string | undefined,
    test: boolean,
  ): Promise<ClaimedRecord | { done: SendResult }> {
    if (key === undefined)
      return { record: newRecord(input, identity, records.newEmailId(), undefined, test), isNew: true };
    const candidateId = randomUUID();
    // The usual case, a key's first attempt: one write reserves the record id
    // and takes the lease, and no record can exist yet.
    if (await keys.reserveFirst(key, candidateId, leaseUntil()))
      return { record: newRecord(input, identity, candidateId, key, test), isNew: true };
    const emailId = await keys.findEmailId(key);
    if (emailId === undefined) throw new Error(`idempotency key vanished: ${key}`);
    // Replays of a finished send are answered without touching the lease.
    const seen = await records.findById(emailId);
    const replay = seen && !failedBeforeHandOver(seen) && finished(seen);
    if (replay) return replay;
    // Pending or not yet created: a previous attempt failed transiently (retry
    // it) or is still running (don't send twice). Failed before the provider
    // took it: the step's run was reset (send it now).
    if (!(await keys.claimAttempt(key, leaseUntil()))) throw new MailroomError('transient', IN_PROGRESS);
    // Read again under the lease: the previous holder may have finished in between.
    let existing = await records.findById(emailId);
    if (!existing) return { record: newRecord(input, identity, emailId, key, test), isNew: true };
    const reopened = failedBeforeHandOver(existing);
    if (reopened) existing = await reopen(existing, key);
    const done = finished(existing);
    if (done) return done;
    if (existing.attempt_id) return decideUnknownOutcome(existing, key);
    return { record: existing, isNew: false, reopened };
  }

  /**
   * A step's send failed and the provider never took it, yet the step runs
   * again: only a reset of its workflow run does that (a run that gives up
   * never retries the step). The operator means "send it": the same record
   * becomes pending again and this attempt sends it. An unknown outcome is
   * never reopened (finished() answers it with its failure).
   */
  async function reopen(record: EmailRecord, key: string): Promise<EmailRecord> {
    const reopened = await records.reopenFailed(record.email_id);
    if (reopened) {
      logger.info(
        { email_id: record.email_id, idempotency_key: key, previous_error: record.error },
        'failed email sent again: its workflow step ran again (reset)',
      );
      return reopened;
    }
    return (await records.findById(record.email_id)) ?? record;
  }

  /**
   * A previous attempt may have handed the message over (it died mid-call, or
   * saw no answer) and no provider event has said so yet (the record is still
   * pending). Never call the provider again: wait for events, then give up.
   */
  async function decideUnknownOutcome(record: EmailRecord, key: string): Promise<{ done: SendResult }> {
    const began = (record.attempt_started_at ?? record.updated_at).getTime();
    if (Date.now() - began < OUTCOME_WAIT_MS) {
      await keys.releaseAttempt(key).catch(() => undefined);
      throw new MailroomError('transient', OUTCOME_PENDING);
    }
    const failed = await records.markFailed(record.email_id, OUTCOME_UNKNOWN, 'outcome_unknown');
    // This attempt called no provider: the lease is given back, so a reset
    // after the operator confirmed it not sent (not-sent-command.ts) sends at
    // once instead of waiting the lease out (a minute).
    await keys.releaseAttempt(key).catch(() => undefined);
    if (failed) {
      logger.error(
        { email_id: record.email_id, attempt_id: record.attempt_id, needs_attention: true },
        'email outcome unknown: not resent',
      );
      throw new MailroomError('outcome_unknown', OUTCOME_UNKNOWN);
    }
    // An event moved the record on between the read and the write.
    const now = await records.findById(record.email_id);
    const done = now && finished(now);
    if (done) return done;
    throw new MailroomError('transient', OUTCOME_PENDING);
  }

  return { claimRecord };
}
