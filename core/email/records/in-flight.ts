import type { Db } from 'mongodb';

/**
 * `emails_in_flight`: one small document per pending record (`_id`: the email
 * id; `since`: when its send is due, so when the sweeper's bound starts). The
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
  _id: string;
  since: Date;
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

const DUPLICATE_KEY = 11000;

export function createInFlight(db: Db): InFlight {
  const entries = db.collection<InFlightEntry>(IN_FLIGHT_COLLECTION);
  return {
    async add(emailId, since) {
      try {
        await entries.insertOne({ _id: emailId, since });
      } catch (err) {
        // Already there (a retried insert): the entry stands.
        if ((err as { code?: unknown }).code !== DUPLICATE_KEY) throw err;
      }
    },
    async renew(emailId, since) {
      await entries.updateOne({ _id: emailId }, { $set: { since } }, { upsert: true });
    },
    async remove(emailId) {
      await entries.deleteOne({ _id: emailId });
    },
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
