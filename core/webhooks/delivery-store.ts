import type { Collection, Db } from 'mongodb';
import { onlyDuplicates, writeErrorsOf } from '../bulk-write-errors.ts';
import type { EventType } from './webhook-events.ts';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One document of `webhook_deliveries`: one event to one endpoint. `_id`: `<endpoint _id>/<event id>`. */
export interface DeliveryDoc {
  _id: string;
  endpoint_key: string;
  event_id: string;
  type: EventType;
  /** The exact body every attempt POSTs and signs. */
  payload: string;
  status: DeliveryStatus;
  attempts: number;
  last_response_code: number | null;
  last_error: string | null;
  last_attempt_at: Date | null;
  next_attempt_at: Date | null;
  created_at: Date;
  finished_at: Date | null;
}

export interface AttemptOutcome {
  ok: boolean;
  responseCode: number | null;
  error: string | null;
  nextAttemptAt: Date | null;
}

export interface DeliveryStore {
  /** Creates them; resolves with the keys of those created (the others exist already: handed over before). */
  createMany(docs: readonly DeliveryDoc[]): Promise<Set<string>>;
  get(key: string): Promise<DeliveryDoc | null>;
  /** An endpoint's deliveries, newest first, `before` a delivery's creation time and id (the cursor). */
  list(endpointKey: string, limit: number, before?: { at: Date; id: string }): Promise<DeliveryDoc[]>;
  /** Attempt results, one update each by `_id`, in bulk writes of CHUNK. */
  noteAttempts(results: ReadonlyArray<{ key: string; outcome: AttemptOutcome }>): Promise<void>;
  fail(key: string, why: string): Promise<void>;
  /**
   * A replay: pending again, attempts kept (they are history). False when it
   * was pending already (being attempted, or another replay came first).
   */
  reopen(key: string): Promise<boolean>;
}

/** Writes per bulk write (FerretDB slows sharply on larger ones; docs/storage.md). */
const CHUNK = 25;

export const deliveryKeyOf = (endpointKey: string, eventId: string) => `${endpointKey}/${eventId}`;

export async function ensureDeliveryIndexes(db: Db): Promise<void> {
  await db.collection('webhook_deliveries').createIndex({ endpoint_key: 1, created_at: -1, event_id: -1 });
}

export function createDeliveryStore(db: Db): DeliveryStore {
  const deliveries: Collection<DeliveryDoc> = db.collection<DeliveryDoc>('webhook_deliveries');
  return {
    async createMany(docs) {
      const created = new Set<string>();
      for (let i = 0; i < docs.length; i += CHUNK) {
        const chunk = docs.slice(i, i + CHUNK);
        const existing = new Set<number>();
        try {
          await deliveries.insertMany(chunk, { ordered: false });
        } catch (err) {
          // Duplicate ids only: those deliveries were created by an earlier hand-over.
          const list = writeErrorsOf(err);
          if (list === undefined || !onlyDuplicates(err)) throw err;
          for (const e of list) existing.add(e.index);
        }
        chunk.forEach((doc, index) => existing.has(index) || created.add(doc._id));
      }
      return created;
    },
    get: (key) => deliveries.findOne({ _id: key }),
    list: (endpointKey, limit, before) =>
      // By the `{ endpoint_key, created_at }` index on MongoDB; FerretDB scans
      // (an operator's listing, never a hot path).
      deliveries
        .find({
          endpoint_key: endpointKey,
          ...(before
            ? {
                $or: [
                  { created_at: { $lt: before.at } },
                  { created_at: before.at, event_id: { $lt: before.id } },
                ],
              }
            : {}),
        })
        .sort({ created_at: -1, event_id: -1 })
        .limit(limit)
        .toArray(),
    async noteAttempts(results) {
      const now = new Date();
      for (let i = 0; i < results.length; i += CHUNK)
        await deliveries.bulkWrite(
          results.slice(i, i + CHUNK).map(({ key, outcome }) => ({
            updateOne: {
              filter: { _id: key },
              update: {
                $inc: { attempts: 1 },
                $set: {
                  last_response_code: outcome.responseCode,
                  last_error: outcome.error,
                  last_attempt_at: now,
                  next_attempt_at: outcome.nextAttemptAt,
                  ...(outcome.ok ? { status: 'delivered' as const, finished_at: now } : {}),
                },
              },
            },
          })),
          { ordered: false },
        );
    },
    async fail(key, why) {
      await deliveries.updateOne(
        { _id: key, status: 'pending' },
        { $set: { status: 'failed', last_error: why, next_attempt_at: null, finished_at: new Date() } },
      );
    },
    async reopen(key) {
      // Conditional, so of replays asked for at once exactly one reopens it.
      const reopened = await deliveries.updateOne(
        { _id: key, status: { $ne: 'pending' } },
        { $set: { status: 'pending', finished_at: null, next_attempt_at: new Date() } },
      );
      return reopened.matchedCount === 1;
    },
  };
}
