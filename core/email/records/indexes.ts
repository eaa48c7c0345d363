import type { Db } from 'mongodb';
import { ensureInFlightIndex } from './in-flight.ts';

/** Indexes earlier layouts created that no query uses any more. */
const OBSOLETE_INDEXES = ['provider_id', 'company_email', 'pending_sweep'];

/**
 * The indexes of the `emails` collection, created at start (idempotent).
 * Every runtime lookup goes by `_id`; these keep the readable copy of the id
 * and the view keys unique on MongoDB.
 */
export async function ensureEmailIndexes(db: Db): Promise<void> {
  const emails = db.collection('emails');
  await emails.createIndex({ email_id: 1 }, { unique: true, name: 'email_id_unique' });
  await emails.createIndex({ view_key: 1 }, { unique: true, name: 'view_key_unique' });
  // The sweeper's query (in flight since before…): an index range on MongoDB. FerretDB would
  // only pay for it on every send and still scan its small collection (docs/storage.md).
  const info = await db.admin().command({ buildInfo: 1 });
  if (info['ferretdbVersion'] === undefined) await ensureInFlightIndex(db);
  const existing = new Set((await emails.indexes()).map((i) => i.name));
  for (const name of OBSOLETE_INDEXES) if (existing.has(name)) await emails.dropIndex(name);
}
