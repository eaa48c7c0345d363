import type { Db } from 'mongodb';
import { onlyDuplicates } from '../../bulk-write-errors.ts';
import { createGroupCommit } from '../../group-commit.ts';

/**
 * `emails_in_flight`: one small document per pending record (`_id`: the email
 * id; `since`: when its send is due, so when the sweeper's bound starts), or
 * one per block of ids reserved for new sends (id-blocks.ts). The
 * sweeper reads this collection instead of `emails`: on FerretDB 1.24 any
 * filter but an `_id` equality scans and decodes the whole collection, and
 * `emails` holds every record ever sent while this holds only those in
 * flight (sends under way, scheduled sends, and stuck ones until swept).
 *
 * Written beside the record, both commands sent at once (record-store.ts
 * `insert`): an entry without a record is dropped by the sweeper; a record
 * whose entry was refused is deleted again and the send fails. Removed once
 * the record leaves pending.
 * A removal that fails, or a record moved on by a provider event, leaves an
 * entry behind: the sweeper drops entries whose record is not pending.
 */
export const IN_FLIGHT_COLLECTION = 'emails_in_flight';

export interface InFlightEntry {
  /** The email id; or `block:<uuid>` for a block of ids (id-blocks.ts). */
  _id: string;
  since: Date;
  /** A block's email ids. */
  ids?: string[];
}

export interface InFlight {
  /** A new pending record: `since` its creation, or its `send_at` when scheduled. */
  add(emailId: string, since: Date): Promise<void>;
  /** A record pending again (a reset run): its bound starts now. */
  renew(emailId: string, since: Date): Promise<void>;
  remove(emailId: string): Promise<void>;
  /** Entries due before `before`, at most `limit`. */
  due(before: Date, limit: number): Promise<InFlightEntry[]>;
}

/** Entries per write at most: FerretDB 1.24 slows sharply with larger batches (OPEN_WRITE_CHUNK). */
const GROUP_MAX = 25;
/**
 * Removals wait for nobody (a sent record's entry only has to go eventually),
 * so they start at most this often and gather more entries per write.
 */
const REMOVAL_INTERVAL_MS = 10;

/**
 * Adds and removals are group-committed (core/group-commit.ts): the entries
 * of concurrent sends go to the database in one `insertMany`, the removals
 * in one bulk of `deleteOne`s by `_id`, so under load an entry costs a
 * share of a round trip rather than one of its own, and a lone send waits
 * for nothing more than its own write.
 */
export function createInFlight(db: Db): InFlight {
  const entries = db.collection<InFlightEntry>(IN_FLIGHT_COLLECTION);
  const adds = createGroupCommit<InFlightEntry>(async (batch) => {
    try {
      await entries.insertMany(batch, { ordered: false });
    } catch (err) {
      // Entries already there (a retried insert) stand; any other failure fails the whole batch.
      if (!onlyDuplicates(err)) throw err;
    }
  }, GROUP_MAX);
  const removals = createGroupCommit<string>(
    async (ids) => {
      await entries.bulkWrite(
        ids.map((_id) => ({ deleteOne: { filter: { _id } } })),
        { ordered: false },
      );
    },
    GROUP_MAX,
    REMOVAL_INTERVAL_MS,
  );
  return {
    add: (emailId, since) => adds.submit([{ _id: emailId, since }]),
    async renew(emailId, since) {
      await entries.updateOne({ _id: emailId }, { $set: { since } }, { upsert: true });
    },
    remove: (emailId) => removals.submit([emailId]),
    due(before, limit) {
      return entries
        .find({ since: { $lt: before } })
        .limit(limit)
        .toArray();
    },
  };
}

/** The index of the sweeper's query on MongoDB; FerretDB would scan anyway (see indexes.ts). */
export async function ensureInFlightIndex(db: Db): Promise<void> {
  await db.collection(IN_FLIGHT_COLLECTION).createIndex({ since: 1 }, { name: 'in_flight_since' });
}
