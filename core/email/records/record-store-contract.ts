import type { Filter, UpdateFilter } from 'mongodb';
import type { ErrorKind } from '../../errors.ts';
import type { BufferedOpen } from '../tracking/open-buffer.ts';
import type { EmailRecord, TrackedEvent } from './record.ts';
import type { Announcement } from './lifecycle.ts';
import type { MessageFields, RecipientFields } from './new-record.ts';

export interface MarkSentOptions {
  /**
   * Whether another writer (a workflow giving up, the sweeper) may have
   * failed the record as "outcome unknown" while the provider had it, which
   * this then undoes (the write answers the record as it was, one round trip;
   * a second write only when it was). Default true. False for an HTTP send
   * answered within the provider's timeout: nobody else writes its record.
   */
  othersMayHaveFailedIt?: boolean;
  /** The name of the provider that accepted it, stored on the record. */
  provider?: string;
  /** Its announcement, made by `announceSent` while the provider was called. */
  announced?: Promise<Announcement>;
  /**
   * The record as this attempt inserted it, when nobody else writes it
   * (`othersMayHaveFailedIt` false): a listener's record (webhooks) is this
   * with the write applied, so the write needs no answer and joins the
   * others in a batch (record-batches.ts).
   */
  inserted?: EmailRecord;
}

/**
 * What an attempt's mark writes of its message: whom it goes to, whom
 * suppressions left out, and the rest of messageFields when an earlier
 * attempt made the record.
 */
export type AttemptMessage = Partial<MessageFields> &
  RecipientFields &
  Partial<Pick<EmailRecord, 'suppressed'>>;

/** How email records are written and read (record-store.ts implements it over the `emails` collection). */
export interface RecordStore {
  /**
   * The id of a new unkeyed send's record: a fresh UUID, from a block whose
   * in-flight entry covers the record once inserted pending (id-blocks.ts).
   */
  newEmailId(): string;
  insert(record: EmailRecord): Promise<void>;
  findById(emailId: string): Promise<EmailRecord | null>;
  /**
   * Written before the provider is called: attempt `attemptId` is talking to it since `at`.
   * `message`: what this attempt sends, as the record is to say it (the recipients
   * suppressions left, the whole message when an earlier attempt made the record).
   */
  markAttempt(emailId: string, attemptId: string, at: Date, message?: AttemptMessage): Promise<void>;
  /** The provider accepted: sent (a record failed with an unknown outcome included), attempt cleared. */
  markSent(emailId: string, providerId: string, options?: MarkSentOptions): Promise<void>;
  /**
   * Announces (lifecycle.ts) that `emailId` is about to be sent, ahead of
   * `markSent`: the send pipeline does it while the provider call runs, so
   * the announcement (an outbox write when a webhook endpoint listens) costs
   * the send no round trip of its own. Settle it `false` when the provider
   * refused the message; leave it unsettled when the outcome is unknown (the
   * outbox's recovery reads the record).
   */
  announceSent(emailId: string): Promise<Announcement>;
  /** pending → failed; false (and nothing written) when the record is not pending. */
  markFailed(emailId: string, reason: string, kind: ErrorKind): Promise<boolean>;
  /**
   * A failed record the provider never took becomes pending again, to be sent
   * under the same email id (a reset workflow run). The record after the
   * write, or null when it is no longer such a record.
   */
  reopenFailed(emailId: string): Promise<EmailRecord | null>;
  /**
   * An operator saw in the provider's activity feed that a send whose outcome
   * was unknown never went out: the record stays failed, but as one the
   * provider never took (`transient`), so a reset run resends it and a new
   * welcome run sends under a new key. The record after the write, or null
   * when it is not failed with an unknown outcome.
   */
  confirmNotSent(emailId: string): Promise<EmailRecord | null>;
  /**
   * A failed attempt that will be retried (idempotent sends): stays pending,
   * remembers why. `outcomeKnown`: the provider did not take the message, so
   * the attempt mark is cleared; otherwise it stays (the retry must decide).
   */
  noteAttemptFailed(emailId: string, reason: string, kind: ErrorKind, outcomeKnown: boolean): Promise<void>;
  /**
   * Records still pending that were created before `before` (the sweeper);
   * a scheduled one only once its `send_at` is before `before` too; a record
   * reopened by a reset run counts from its reopening. Read from the small
   * in-flight collection (in-flight.ts), never by a scan of `emails`; entries
   * whose record is no longer pending are dropped on the way.
   */
  listPendingBefore(before: Date, limit: number): Promise<EmailRecord[]>;
  /** Applies a tracking or provider event; false when no record matches. */
  applyEvent(
    by: { email_id: string } | { view_key: string },
    event: TrackedEvent,
    at?: Date,
  ): Promise<boolean>;
  /**
   * Provider events in arrival order (one webhook request): the updates go
   * out in bulk writes of OPEN_WRITE_CHUNK, in order, then each record is read
   * once by `_id` (in parallel) to undo a guessed failure. Resolves with the
   * ids of the records that exist (the events that matched one).
   */
  applyEvents(
    events: ReadonlyArray<{ emailId: string; event: TrackedEvent; at: Date }>,
  ): Promise<Set<string>>;
  /**
   * A batch of pixel opens and link clicks (open-buffer.ts), written with bulk
   * writes of OPEN_WRITE_CHUNK updates each (one round trip per chunk, not per
   * open). A pixel open updates the record its key names only if the stored
   * key is the one presented (`{ _id, view_key }`: no read first); a click
   * names its email id, proven by its signed token. Resolves with how many
   * were recorded.
   */
  applyOpens(opens: BufferedOpen[]): Promise<number>;
  /**
   * Each update on its record (one per record, by `_id`,
   * in bulk writes of OPEN_WRITE_CHUNK); resolves with how many matched.
   */
  updateEach(updates: ReadonlyArray<RecordUpdate>): Promise<number>;
}

/** One update of one record; `where`: conditions the record must meet besides its `_id`. */
export interface RecordUpdate {
  emailId: string;
  where?: Filter<EmailRecord>;
  update: UpdateFilter<EmailRecord>;
}
