import type { AnyBulkWriteOperation, Collection, Db, UpdateFilter } from 'mongodb';
import { createKeyedLock } from '../../keyed-lock.ts';
import {
  STATUS_RANK,
  failedBeforeHandOver,
  handedOverRank,
  type EmailRecord,
  type TrackedEvent,
} from './record.ts';
import { emailIdOfViewKey, viewKeyMatches } from '../tracking/view-key.ts';
import { CONFIRMED_NOT_SENT } from '../email-messages.ts';
import { HANDED_OVER_FIELDS, eventUpdate, openUpdate, wasGuessedFailed } from './record-events.ts';
import {
  announce,
  NO_LIFECYCLE_SINK,
  type Announcement,
  type LifecycleChange,
  type LifecycleSink,
} from './lifecycle.ts';
import { change, eventChanges, suppressedChange } from './lifecycle-changes.ts';
import { createInFlight } from './in-flight.ts';
import { repeatAnnouncements } from './repeat-announcements.ts';
import { createIdBlocks, isBlockEntry } from './id-blocks.ts';
import { createRecordBatches } from './record-batches.ts';

/**
 * The `emails` collection: how email records are written and read.
 *
 * Every runtime read and write selects by `_id`. Why: FerretDB 1.24's SQLite
 * backend uses an index only for a top-level `_id` equality (upstream only for
 * exactly `{ _id: X }`; our build also with other conditions beside it,
 * infra/ferretdb/README.md); any other filter (`{ email_id }`, `{ view_key }`,
 * `{ _id: { $in } }`) scans and decodes the whole collection in Go (hundreds of
 * times slower at a few thousand records: docs/benchmarks.md).
 * record-store.test.ts asserts this on the wire. Only $set/$min/$max/$inc updates:
 * FerretDB-compatible.
 */

export type { AttemptMessage, RecordStore } from './record-store-contract.ts';
import type { RecordStore, RecordUpdate } from './record-store-contract.ts';

/**
 * Updates per bulk write of opens. FerretDB 1.24 (SQLite) slows down sharply
 * with the number of updates in one command (measured: 25 → 0.1 s, 50 → 0.5 s,
 * 100 → no answer within 100 s); MongoDB takes any size. 25 keeps both fast.
 */
export const OPEN_WRITE_CHUNK = 25;

/**
 * `lifecycle`: told of each change before it is written and after
 * (lifecycle.ts); outbound webhooks listen there.
 */
export function createRecordStore(db: Db, lifecycle: LifecycleSink = NO_LIFECYCLE_SINK): RecordStore {
  const emails: Collection<EmailRecord> = db.collection<EmailRecord>('emails');
  /** The pending records, for the sweeper (in-flight.ts). */
  const inFlight = createInFlight(db);
  /** New sends' ids, in blocks that each have one in-flight entry (id-blocks.ts). */
  const blocks = createIdBlocks(db);
  /** The send path's inserts and "sent" updates, group-committed. */
  const batches = createRecordBatches(emails);
  /** The record left pending: its block is told, or its own entry removed. */
  const leaveInFlight = (emailId: string): Promise<void> =>
    blocks.leave(emailId) ? Promise.resolve() : inFlight.remove(emailId);
  /**
   * After the record was sent, not awaited (the answer does not wait for it; a sent record is
   * never pending again); a failure leaves the entry to the sweeper, which drops it.
   */
  const landed = (emailId: string) => void leaveInFlight(emailId).catch(() => undefined);

  const announced = <T>(
    changes: LifecycleChange[],
    write: (announcement: Announcement) => Promise<T>,
    written?: (result: T) => boolean | EmailRecord,
    early?: Promise<Announcement>,
  ) => announce(lifecycle, changes, write, written, early);
  /** Serialises the writes to one email record (see keyed-lock.ts for why). */
  const lock = createKeyedLock();
  /** Repeated pixel opens and clicks of one email: one announcement a minute (repeat-announcements.ts). */
  const repeats = repeatAnnouncements();

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
    insert: (record) =>
      announced(suppressedChange(record._id, record.suppressed, record.created_at), async () => {
        if (record.status_rank !== STATUS_RANK.pending) {
          await batches.insert(record);
          return;
        }
        // A new send's id is its block's (whose entry is written once for many sends); any
        // other pending record gets an entry of its own, beside it: one round trip's wait.
        const blockEntry = record.send_at === undefined ? blocks.enter(record._id) : undefined;
        const [entry, inserted] = await Promise.allSettled([
          blockEntry ?? inFlight.add(record._id, record.send_at ?? record.created_at),
          batches.insert(record),
        ]);
        if (inserted.status === 'rejected') {
          blocks.leave(record._id);
          throw inserted.reason; // an entry alone: the sweeper drops it
        }
        if (entry.status === 'rejected') {
          // A pending record the sweeper could never find: take it back, and the send fails
          // as if nothing was written (the caller retries with the same id).
          await emails.deleteOne({ _id: record._id });
          throw entry.reason;
        }
      }),

    newEmailId: () => blocks.take(),

    async findById(emailId) {
      return emails.findOne({ _id: emailId });
    },

    markAttempt: (emailId, attemptId, at, message) =>
      announced(suppressedChange(emailId, message?.suppressed, at), () =>
        lock.run(emailId, async () => {
          await emails.updateOne(
            { _id: emailId },
            { $set: { ...message, attempt_id: attemptId, attempt_started_at: at, updated_at: at } },
          );
        }),
      ),

    announceSent: (emailId) => lifecycle.intend([change('sent', emailId, new Date())]),

    markSent: (emailId, providerId, options = {}) => {
      const { othersMayHaveFailedIt = true, provider, announced: early, inserted } = options;
      return announced(
        [change('sent', emailId, new Date())],
        (announcement) =>
          lock.run(emailId, async (): Promise<EmailRecord | undefined> => {
            const now = new Date();
            // The provider id is kept even if a webhook event already moved the status on.
            const set = {
              provider_id: providerId,
              ...(provider ? { provider } : {}),
              updated_at: now,
              error: null,
              error_kind: null,
              attempt_id: null,
              attempt_started_at: null,
            };
            const sent: UpdateFilter<EmailRecord> = {
              $set: set,
              $min: { sent_at: now },
              $max: { status_rank: STATUS_RANK.sent },
            };
            if (!othersMayHaveFailedIt) {
              // A listener (webhooks) gets the record: the one this attempt inserted, with
              // this write applied (nobody else writes it); otherwise the write's own answer.
              if (announcement.wantsRecord && inserted === undefined) {
                const after = await emails.findOneAndUpdate({ _id: emailId }, sent, {
                  returnDocument: 'after',
                });
                landed(emailId);
                return after ?? undefined;
              }
              await batches.updateById(emailId, sent);
              landed(emailId);
              return announcement.wantsRecord && inserted ? sentVersionOf(inserted, set, now) : undefined;
            }
            // The record as it was before this write, in the same round trip: was
            // it failed as "outcome unknown" meanwhile? The answer proves otherwise.
            // (No projection: FerretDB does not implement one on findAndModify.)
            const before = await emails.findOneAndUpdate({ _id: emailId }, sent, {
              returnDocument: 'before',
            });
            landed(emailId);
            if (before && wasGuessedFailed(before))
              await setHandedOverRank(emailId, { ...before, ...sent.$set });
            return undefined;
          }),
        (after) => after ?? true,
        early,
      ).then(() => undefined);
    },

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
      announced(
        [change('failed', emailId, new Date())],
        () =>
          lock.run(emailId, async () => {
            const failed = await updateIfPending(
              emailId,
              { error: reason, error_kind: kind, updated_at: new Date() },
              STATUS_RANK.failed,
            );
            // Failed now or not pending before: either way no longer in flight. Awaited (off the
            // send's path): a reset run may renew the entry next, and must not be overtaken.
            await leaveInFlight(emailId).catch(() => undefined);
            return failed;
          }),
        (failed) => failed,
      ),

    confirmNotSent: (emailId) =>
      lock.run(emailId, () =>
        emails.findOneAndUpdate(
          { _id: emailId, status_rank: STATUS_RANK.failed, error_kind: 'outcome_unknown' },
          { $set: { error: CONFIRMED_NOT_SENT, error_kind: 'transient', updated_at: new Date() } },
          { returnDocument: 'after' },
        ),
      ),

    reopenFailed: (emailId) =>
      lock.run(emailId, async () => {
        const current = await emails.findOne({ _id: emailId });
        if (!current || !failedBeforeHandOver(current)) return null;
        // In flight again, its bound counted from now: before the write, as for a new record.
        await inFlight.renew(emailId, new Date());
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
      // The in-flight entries due (in-flight.ts), then their records by `_id`, all at once.
      const due = await inFlight.due(before, limit);
      const found = await Promise.all(
        due.map((entry) =>
          isBlockEntry(entry) ? pendingOfBlock(entry._id, entry.ids, before) : pendingOfEntry(entry._id),
        ),
      );
      return found.flat();
    },

    async applyEvent(by, event, at = new Date()) {
      const emailId = await resolveId(by);
      if (emailId === undefined) return false;
      return announced(
        eventChanges([{ emailId, event, at }]),
        () => lock.run(emailId, () => applyEventLocked(emailId, event, at)),
        (found) => found,
      );
    },

    applyEvents: (events) => announced(eventChanges(events), () => applyEventsNow(events)),

    updateEach: (updates) => updateEach(updates, false),

    async applyOpens(opens) {
      const updates: RecordUpdate[] = [];
      const changes: LifecycleChange[] = [];
      for (const open of opens) {
        const update = openUpdate(open.first, open.last, open.clicked);
        // A click's email id comes from a signed token: no key to check.
        if (open.emailId !== undefined) {
          updates.push({ emailId: open.emailId, update });
          const kind = open.clicked ? 'clicked' : 'opened';
          if (repeats.due(kind, open.emailId)) changes.push(change(kind, open.emailId, open.last));
          continue;
        }
        const emailId = open.viewKey === undefined ? undefined : emailIdOfViewKey(open.viewKey);
        if (emailId === undefined) continue;
        updates.push({ emailId, where: { view_key: open.viewKey }, update });
        if (repeats.due('opened', emailId)) changes.push(change('opened', emailId, open.last, open.viewKey));
      }
      if (updates.length === 0) return 0;
      const matched = await announced(
        changes,
        () => updateEach(updates, false),
        (count) => count > 0,
      );
      for (const c of changes) repeats.announced(c.kind, c.emailId);
      return matched;
    },
  };

  /** A due entry's record if still pending; else the entry goes (no record: a crash between the two inserts). */
  async function pendingOfEntry(emailId: string): Promise<EmailRecord[]> {
    const record = await emails.findOne({ _id: emailId });
    if (record?.status_rank === STATUS_RANK.pending) return [record];
    await inFlight.remove(emailId);
    return [];
  }

  /**
   * A due block's records still pending since before `before` (a record of
   * it pending again since, by a reset run, has an entry of its own). The
   * block's entry goes once none of its records is pending.
   */
  async function pendingOfBlock(blockId: string, ids: string[], before: Date): Promise<EmailRecord[]> {
    const records = await Promise.all(ids.map((_id) => emails.findOne({ _id })));
    const pending = records.filter((r) => r?.status_rank === STATUS_RANK.pending) as EmailRecord[];
    if (pending.length === 0) await inFlight.remove(blockId);
    return pending.filter((r) => r.updated_at < before);
  }

  async function applyEventsNow(
    events: ReadonlyArray<{ emailId: string; event: TrackedEvent; at: Date }>,
  ): Promise<Set<string>> {
    // In arrival order (`$max` keeps the latest open's `time` whatever the order); an unknown id matches nothing.
    await updateEach(
      events.map((e) => ({ emailId: e.emailId, update: eventUpdate(e.event, e.at) })),
      true,
    );
    // One read per record afterwards says both whether it exists and whether
    // a guessed failure must be undone.
    const ids = [...new Set(events.map((e) => e.emailId))];
    const found = await Promise.all(ids.map((id) => lock.run(id, () => undoUnknownOutcome(id))));
    return new Set(ids.filter((_, i) => found[i]));
  }

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

/**
 * `inserted` (a pending record nobody else writes) as markSent's update
 * leaves it: `set` applied, `sent_at` the earlier, `status_rank` the higher.
 */
function sentVersionOf(inserted: EmailRecord, set: Partial<EmailRecord>, now: Date): EmailRecord {
  return {
    ...inserted,
    ...set,
    sent_at: inserted.sent_at && inserted.sent_at < now ? inserted.sent_at : now,
    status_rank: Math.max(inserted.status_rank, STATUS_RANK.sent),
  };
}
