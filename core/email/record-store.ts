import type { AnyBulkWriteOperation, Collection, Db, Filter, UpdateFilter } from 'mongodb';
import type { ErrorKind } from '../errors.ts';
import { KeyedLock } from './keyed-lock.ts';
import type { BufferedOpen } from './open-buffer.ts';
import {
  STATUS_RANK,
  failedBeforeHandOver,
  handedOverRank,
  type EmailRecord,
  type TrackedEvent,
} from './record.ts';
import { emailIdOfViewKey, viewKeyMatches } from './view-key.ts';

/**
 * The `emails` collection: how email records are written and read.
 *
 * Every runtime read and write selects by `_id`. Why: FerretDB 1.24's SQLite
 * backend uses an index only for a top-level `_id` equality (upstream only for
 * exactly `{ _id: X }`; our build also with other conditions beside it,
 * infra/ferretdb/README.md); any other filter (`{ email_id }`, `{ view_key }`,
 * `{ _id: { $in } }`) scans and decodes the whole collection in Go (measured at
 * 5,000 records: ~500 ms per update, against ~1.5 ms by `_id`).
 * record-store.test.ts asserts this on the wire. Only $set/$min/$max/$inc updates:
 * FerretDB-compatible.
 */

export interface RecordStore {
  insert(record: EmailRecord): Promise<void>;
  findById(emailId: string): Promise<EmailRecord | null>;
  /** Written before the provider is called: attempt `attemptId` is talking to it since `at`. */
  /** `narrowed`: the recipients this attempt sends to, when suppressions left some out. */
  markAttempt(
    emailId: string,
    attemptId: string,
    at: Date,
    narrowed?: Pick<EmailRecord, 'recipients' | 'recipient_email' | 'recipient_name' | 'suppressed'>,
  ): Promise<void>;
  /** The provider accepted: sent (a record failed with an unknown outcome included), attempt cleared. */
  /**
   * `othersMayHaveFailedIt`: whether another writer (a workflow giving up, the
   * sweeper) may have failed the record as "outcome unknown" while the
   * provider had it, which this then undoes (the write answers the record as
   * it was, one round trip; a second write only when it was). False for an HTTP
   * send answered within the provider's timeout: nobody else writes its record.
   */
  markSent(
    emailId: string,
    providerId: string,
    othersMayHaveFailedIt?: boolean,
    provider?: string,
  ): Promise<void>;
  /** pending → failed; false (and nothing written) when the record is not pending. */
  markFailed(emailId: string, reason: string, kind: ErrorKind): Promise<boolean>;
  /**
   * A failed record the provider never took becomes pending again, to be sent
   * under the same email id (a reset workflow run). The record after the
   * write, or null when it is no longer such a record.
   */
  reopenFailed(emailId: string): Promise<EmailRecord | null>;
  /**
   * A failed attempt that will be retried (idempotent sends): stays pending,
   * remembers why. `outcomeKnown`: the provider did not take the message, so
   * the attempt mark is cleared; otherwise it stays (the retry must decide).
   */
  noteAttemptFailed(emailId: string, reason: string, kind: ErrorKind, outcomeKnown: boolean): Promise<void>;
  /**
   * Records still pending that were created before `before` (the sweeper).
   * A scan on FerretDB (status and date filters are not pushed down): for a
   * periodic task, never for a request.
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

/**
 * Updates per bulk write of opens. FerretDB 1.24 (SQLite) slows down sharply
 * with the number of updates in one command (measured: 25 → 0.1 s, 50 → 0.5 s,
 * 100 → no answer within 100 s); MongoDB takes any size. 25 keeps both fast.
 */
export const OPEN_WRITE_CHUNK = 25;

export function recordStore(db: Db): RecordStore {
  const emails: Collection<EmailRecord> = db.collection<EmailRecord>('emails');
  /** Serialises the writes to one email record (see keyed-lock.ts for why). */
  const lock = new KeyedLock();

  /** A pending record's read-then-write (see markFailed for why that is safe). */
  async function updateIfPending(emailId: string, update: Partial<EmailRecord>, rank: number) {
    const current = await emails.findOne({ _id: emailId }, { projection: { status_rank: 1 } });
    if (!current || current.status_rank !== STATUS_RANK.pending) return false;
    await emails.updateOne({ _id: emailId }, { $set: update, $max: { status_rank: rank } });
    return true;
  }

  /** The email id an event is for; a view key must match the stored one exactly. */
  async function resolveId(by: { email_id: string } | { view_key: string }): Promise<string | undefined> {
    if ('email_id' in by) return by.email_id;
    const emailId = emailIdOfViewKey(by.view_key);
    if (emailId === undefined) return undefined;
    const doc = await emails.findOne({ _id: emailId }, { projection: { view_key: 1 } });
    return doc && viewKeyMatches(by.view_key, doc.view_key) ? emailId : undefined;
  }

  /**
   * One update per record, by `_id`, in bulk writes of OPEN_WRITE_CHUNK
   * (one round trip each), under each record's lock like every other write to
   * it (keyed-lock.ts). Resolves with how many records matched.
   */
  async function updateEach(updates: ReadonlyArray<RecordUpdate>, ordered: boolean): Promise<number> {
    let matched = 0;
    for (let i = 0; i < updates.length; i += OPEN_WRITE_CHUNK) {
      const chunk = updates.slice(i, i + OPEN_WRITE_CHUNK);
      const ops: AnyBulkWriteOperation<EmailRecord>[] = chunk.map(({ emailId, where, update }) => ({
        updateOne: { filter: { _id: emailId, ...where }, update },
      }));
      const result = await lock.runAll(
        chunk.map((u) => u.emailId),
        () => emails.bulkWrite(ops, { ordered }),
      );
      matched += result.matchedCount;
    }
    return matched;
  }

  return {
    async insert(record) {
      await emails.insertOne({ ...record });
    },

    async findById(emailId) {
      return emails.findOne({ _id: emailId });
    },

    markAttempt: (emailId, attemptId, at, narrowed) =>
      lock.run(emailId, async () => {
        await emails.updateOne(
          { _id: emailId },
          { $set: { ...narrowed, attempt_id: attemptId, attempt_started_at: at, updated_at: at } },
        );
      }),

    markSent: (emailId, providerId, othersMayHaveFailedIt = true, provider) =>
      lock.run(emailId, async () => {
        const now = new Date();
        // The provider id is kept even if a webhook event already moved the status on.
        const sent: UpdateFilter<EmailRecord> = {
          $set: {
            provider_id: providerId,
            ...(provider ? { provider } : {}),
            updated_at: now,
            error: null,
            error_kind: null,
            attempt_id: null,
            attempt_started_at: null,
          },
          $min: { sent_at: now },
          $max: { status_rank: STATUS_RANK.sent },
        };
        if (!othersMayHaveFailedIt) {
          await emails.updateOne({ _id: emailId }, sent);
          return;
        }
        // The record as it was before this write, in the same round trip: was
        // it failed as "outcome unknown" meanwhile? The answer proves otherwise.
        // (No projection: FerretDB does not implement one on findAndModify.)
        const before = await emails.findOneAndUpdate({ _id: emailId }, sent, { returnDocument: 'before' });
        if (before && wasGuessedFailed(before)) await setHandedOverRank(emailId, { ...before, ...sent.$set });
      }),

    /*
     * Read, then write: `failed` must not replace a status the provider
     * reported, and `$max` alone would let it. A conditional filter would make
     * it atomic but would scan on FerretDB. The read-then-write is acceptable
     * because the only writers to a PENDING record are its own send attempt
     * (one at a time: the in-process lock, and the attempt lease across
     * processes) and the workflow giving up after that attempt. Provider
     * events and opens need a message the provider accepted; the one window
     * left is a send whose answer was lost (the provider has it, the attempt
     * saw an error) AND whose event reaches ANOTHER process between this read
     * and this write (within one process the lock orders them): then `failed`
     * wins, which is what the attempt itself believed anyway.
     */
    markFailed: (emailId, reason, kind) =>
      lock.run(emailId, () =>
        updateIfPending(
          emailId,
          { error: reason, error_kind: kind, updated_at: new Date() },
          STATUS_RANK.failed,
        ),
      ),

    reopenFailed: (emailId) =>
      lock.run(emailId, async () => {
        const current = await emails.findOne({ _id: emailId });
        if (!current || !failedBeforeHandOver(current)) return null;
        return emails.findOneAndUpdate(
          { _id: emailId, status_rank: STATUS_RANK.failed, error_kind: current.error_kind },
          {
            $set: {
              status_rank: STATUS_RANK.pending,
              error: null,
              error_kind: null,
              attempt_id: null,
              attempt_started_at: null,
              updated_at: new Date(),
            },
            $inc: { resends: 1 },
          },
          { returnDocument: 'after' },
        );
      }),

    noteAttemptFailed: (emailId, reason, kind, outcomeKnown) =>
      lock.run(emailId, async () => {
        // Same read-then-write argument as markFailed; the rank stays pending.
        await updateIfPending(
          emailId,
          {
            error: reason,
            error_kind: kind,
            updated_at: new Date(),
            ...(outcomeKnown ? { attempt_id: null, attempt_started_at: null } : {}),
          },
          STATUS_RANK.pending,
        );
      }),

    async listPendingBefore(before, limit) {
      return emails
        .find({ status_rank: STATUS_RANK.pending, created_at: { $lt: before } })
        .limit(limit)
        .toArray();
    },

    async applyEvent(by, event, at = new Date()) {
      const emailId = await resolveId(by);
      if (emailId === undefined) return false;
      return lock.run(emailId, () => applyEventLocked(emailId, event, at));
    },

    async applyEvents(events) {
      // In arrival order (`time` is the latest open); an unknown id matches nothing.
      await updateEach(
        events.map((e) => ({ emailId: e.emailId, update: eventUpdate(e.event, e.at) })),
        true,
      );
      // One read per record afterwards says both whether it exists and whether
      // a guessed failure must be undone.
      const ids = [...new Set(events.map((e) => e.emailId))];
      const found = await Promise.all(ids.map((id) => lock.run(id, () => undoUnknownOutcome(id))));
      return new Set(ids.filter((_, i) => found[i]));
    },

    updateEach: (updates) => updateEach(updates, false),

    async applyOpens(opens) {
      const updates = opens.flatMap((open): RecordUpdate[] => {
        const update = openUpdate(open.first, open.last, open.clicked);
        // A click's email id comes from a signed token: no key to check.
        if (open.emailId !== undefined) return [{ emailId: open.emailId, update }];
        const emailId = open.viewKey === undefined ? undefined : emailIdOfViewKey(open.viewKey);
        return emailId === undefined ? [] : [{ emailId, where: { view_key: open.viewKey }, update }];
      });
      return updates.length === 0 ? 0 : updateEach(updates, false);
    },
  };

  /**
   * The provider proved it had the message (it answered, or sent an event)
   * after the record was failed because the outcome was unknown: the record
   * takes the status its events give it. The one case where `failed` is not
   * terminal: it was a guess, and now the answer is known.
   */
  async function undoUnknownOutcome(emailId: string): Promise<boolean> {
    // A read then a write, both by `_id`: the write only in the rare case.
    const after = await emails.findOne({ _id: emailId }, { projection: HANDED_OVER_FIELDS });
    if (after && wasGuessedFailed(after)) await setHandedOverRank(emailId, after);
    return after !== null;
  }

  async function setHandedOverRank(emailId: string, record: Partial<EmailRecord>): Promise<void> {
    await emails.updateOne(
      { _id: emailId },
      { $set: { status_rank: handedOverRank(record), error: null, error_kind: null, attempt_id: null } },
    );
  }

  async function applyEventLocked(emailId: string, event: TrackedEvent, at: Date): Promise<boolean> {
    // The record after the event, in the same round trip (as markSent reads the one before).
    const after = await emails.findOneAndUpdate({ _id: emailId }, eventUpdate(event, at), {
      returnDocument: 'after',
    });
    if (!after) return false;
    if (wasGuessedFailed(after)) await setHandedOverRank(emailId, after);
    return true;
  }
}

/** What undoing an "outcome unknown" failure reads of a record. */
const HANDED_OVER_FIELDS = { status_rank: 1, error_kind: 1, bounced_at: 1, opened: 1, delivered: 1 } as const;

/** Failed because the outcome was unknown: a guess, which a sign of the provider having it undoes. */
const wasGuessedFailed = (record: Partial<EmailRecord>) =>
  record.status_rank === STATUS_RANK.failed && record.error_kind === 'outcome_unknown';

/**
 * One event as one update: flags whatever the status, `$min` keeps the first
 * occurrence's time, `$max` moves the status forward only.
 */
function eventUpdate(event: TrackedEvent, at: Date) {
  const flags: Partial<EmailRecord> = { updated_at: at };
  const firsts: Partial<Record<'sent_at' | 'delivered_at' | 'opened_at' | 'bounced_at', Date>> = {};
  let rank: number;
  if (event === 'processed') {
    firsts.sent_at = at;
    rank = STATUS_RANK.sent;
  } else if (event === 'delivered') {
    flags.delivered = true;
    firsts.delivered_at = at;
    rank = STATUS_RANK.delivered;
  } else if (event === 'opened' || event === 'clicked') {
    const open = openUpdate(at, at, event === 'clicked');
    Object.assign(flags, open.$set);
    Object.assign(firsts, open.$min);
    rank = open.$max.status_rank;
  } else {
    firsts.bounced_at = at;
    rank = STATUS_RANK.bounced;
  }
  return { $set: flags, $min: firsts, $max: { status_rank: rank } };
}

/** An open: flags whatever the status, `opened_at` the first open, status at most raised to opened. */
function openUpdate(first: Date, last: Date, clicked = false) {
  return {
    $set: { opened: true, time: last, updated_at: last, ...(clicked ? { clicked: true } : {}) },
    $min: { opened_at: first },
    $max: { status_rank: STATUS_RANK.opened },
  };
}
