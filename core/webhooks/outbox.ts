import type { AnyBulkWriteOperation, Collection, Db } from 'mongodb';
import { onlyDuplicates } from '../bulk-write-errors.ts';
import type { LifecycleKind } from '../email/records/index.ts';
import type { EventAudience } from './subscriptions.ts';
import type { EventType, WorkflowEventData } from './webhook-events.ts';

/**
 * One document of `webhook_outbox`: an event written before (email events)
 * or as (workflow events) the change it tells of, until the relay handed it
 * to Temporal. `_id`: the event id.
 */
export interface OutboxDoc {
  _id: string;
  type: EventType;
  at: Date;
  created_at: Date;
  /** Email events: the record and the kind of change (its happenedFilter tells whether it was written). */
  email_id?: string;
  kind?: LifecycleKind;
  view_key?: string;
  /** Workflow events: who gets it and what it says (no record to read). */
  audience?: EventAudience;
  data?: WorkflowEventData;
}

/** Updates per bulk write (FerretDB slows sharply on larger ones; docs/storage.md). */
const CHUNK = 25;

export interface Outbox {
  /** Inserts the entries; an entry whose id exists already (a deterministic id emitted again) is skipped. */
  add(docs: OutboxDoc[]): Promise<void>;
  remove(ids: readonly string[]): Promise<void>;
  /** The oldest entries created before `before`, at most `limit` (the relay's recovery pass). */
  olderThan(before: Date, limit: number): Promise<OutboxDoc[]>;
}

export function createOutbox(db: Db): Outbox {
  const outbox: Collection<OutboxDoc> = db.collection<OutboxDoc>('webhook_outbox');
  async function eachChunk(ids: readonly string[], op: (id: string) => AnyBulkWriteOperation<OutboxDoc>) {
    for (let i = 0; i < ids.length; i += CHUNK)
      await outbox.bulkWrite(ids.slice(i, i + CHUNK).map(op), { ordered: false });
  }
  return {
    async add(docs) {
      for (let i = 0; i < docs.length; i += CHUNK) {
        try {
          await outbox.insertMany(docs.slice(i, i + CHUNK), { ordered: false });
        } catch (err) {
          // Duplicate ids only: the event is in the outbox (or was handed over) already.
          if (!onlyDuplicates(err)) throw err;
        }
      }
    },
    remove: (ids) => eachChunk(ids, (id) => ({ deleteOne: { filter: { _id: id } } })),
    // A scan on FerretDB (a date filter is not pushed down): the outbox holds only what is
    // not handed over yet, which the relay keeps small.
    olderThan: (before, limit) =>
      outbox
        .find({ created_at: { $lt: before } })
        .sort({ created_at: 1 })
        .limit(limit)
        .toArray(),
  };
}

export async function ensureOutboxIndexes(db: Db): Promise<void> {
  await db.collection('webhook_outbox').createIndex({ created_at: 1 });
}
