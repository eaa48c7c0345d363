import type { Db } from 'mongodb';
import { IN_FLIGHT_COLLECTION, ensureInFlightIndex } from './in-flight.ts';

/** Indexes earlier layouts created that no query uses any more. */
const OBSOLETE_INDEXES = [
  'provider_id',
  'company_email',
  'pending_sweep',
  // Unique already: `email_id` is always `_id`, and a view key embeds the email id
  // (new-record.ts, tracking/view-key.ts). Each cost every insert an index write.
  'email_id_unique',
  'view_key_unique',
];

/**
 * The indexes of the `emails` collection, created at start (idempotent).
 * Every runtime lookup goes by `_id`, and `_id` alone keeps records unique:
 * no secondary index on `emails` (each would be written by every send).
 */
export async function ensureEmailIndexes(db: Db): Promise<void> {
  // Made here, not by a send's first insert: a send writes both at once (record-store.ts).
  for (const name of ['emails', IN_FLIGHT_COLLECTION]) await createCollectionOnce(db, name);
  const emails = db.collection('emails');
  // The sweeper's query (in flight since before…): an index range on MongoDB. FerretDB would
  // only pay for it on every send and still scan its small collection (docs/storage.md).
  const info = await db.admin().command({ buildInfo: 1 });
  if (info['ferretdbVersion'] === undefined) await ensureInFlightIndex(db);
  const existing = new Set((await emails.indexes()).map((i) => i.name));
  for (const name of OBSOLETE_INDEXES) if (existing.has(name)) await emails.dropIndex(name);
}

const NAMESPACE_EXISTS = 48;

async function createCollectionOnce(db: Db, name: string): Promise<void> {
  try {
    await db.createCollection(name);
  } catch (err) {
    // Made by an earlier start, or by another replica starting beside this one.
    if ((err as { code?: unknown }).code !== NAMESPACE_EXISTS) throw err;
  }
}
