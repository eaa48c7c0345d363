import type { AnyBulkWriteOperation, Db } from 'mongodb';
import type { Logger } from '../../logger.ts';
import { OPEN_WRITE_CHUNK } from './record-store.ts';

/**
 * Retention (EMAIL_RETENTION_DAYS; 0 keeps everything): the worker deletes
 * email records (their events are fields of the record and go with it),
 * workflow steps' idempotency keys (`email_idempotency`) and outbound
 * webhook deliveries with their attempts (`webhook_deliveries`, one per
 * event and endpoint: as many as the records, or more) created more than
 * that many days ago. docs/storage.md, "What grows and how it is pruned".
 *
 * FerretDB 1.24 has no TTL indexes and scans for any filter but an `_id`
 * equality (a `{ created_at: { $lt } }` query decodes every record: minutes
 * at a million). What it does answer without a scan is a find with no filter,
 * no sort and a limit: `SELECT … LIMIT n`, the first n rows in insertion
 * order. MongoDB reads a collection in insertion order too (record ids grow).
 * Records are inserted when created, so that order is oldest first: the
 * pruner reads the first PRUNE_PAGE (`_id` and `created_at` only), deletes
 * the expired ones by `_id` (bulk writes of OPEN_WRITE_CHUNK), and reads the
 * next first page, until a page holds nothing expired or the run's time
 * budget is spent. Each page costs the same whatever the collection's size.
 *
 * A record inserted out of creation order (concurrent sends, a few
 * milliseconds) is deleted with its page; one behind a whole page of younger
 * records would wait until those expire. The same code runs on MongoDB; a TTL
 * index is not used, so changing the setting needs no index rebuild.
 */

export const PRUNE_PAGE = 500;
/** How often the worker prunes. */
export const PRUNE_INTERVAL_MS = 10 * 60_000;
/** A run stops after this long; the next run goes on (at most 5% of the worker's time). */
export const PRUNE_BUDGET_MS = 30_000;

/** The collections pruned, each by its `created_at`. */
export const PRUNED_COLLECTIONS = ['emails', 'email_idempotency', 'webhook_deliveries'] as const;
export type PrunedCollection = (typeof PRUNED_COLLECTIONS)[number];

export type PruneResult = Record<PrunedCollection, number>;

const DAY_MS = 24 * 60 * 60 * 1000;

/** What the pruner reads of a document (string `_id`s: email ids, step keys, delivery keys). */
interface Dated {
  _id: string;
  created_at?: Date;
}

/** The oldest documents of `name` created before `cutoff`, deleted page by page; answers how many. */
async function pruneCollection(
  db: Db,
  name: PrunedCollection,
  cutoff: Date,
  deadline: number,
  page: number,
): Promise<number> {
  const collection = db.collection<Dated>(name);
  let deleted = 0;
  while (Date.now() < deadline) {
    // No filter and no sort: the only limited read FerretDB does without a scan.
    const oldest = await collection.find({}, { projection: { created_at: 1 }, limit: page }).toArray();
    const expired = oldest.filter((d) => d.created_at instanceof Date && d.created_at < cutoff);
    for (let i = 0; i < expired.length; i += OPEN_WRITE_CHUNK) {
      const ops: AnyBulkWriteOperation<Dated>[] = expired
        .slice(i, i + OPEN_WRITE_CHUNK)
        .map((d) => ({ deleteOne: { filter: { _id: d._id } } }));
      deleted += (await collection.bulkWrite(ops, { ordered: false })).deletedCount;
    }
    if (expired.length === 0 || oldest.length < page) break;
  }
  return deleted;
}

/**
 * One pruning run: every PRUNED_COLLECTIONS document created more than
 * `retentionDays` ago, oldest first, within `budgetMs`. Logs what it deleted.
 */
export async function pruneExpired(
  db: Db,
  logger: Logger,
  options: { retentionDays: number; now?: Date; budgetMs?: number; page?: number },
): Promise<PruneResult> {
  const result: PruneResult = { emails: 0, email_idempotency: 0, webhook_deliveries: 0 };
  if (options.retentionDays <= 0) return result;
  const now = options.now ?? new Date();
  const cutoff = new Date(now.getTime() - options.retentionDays * DAY_MS);
  const deadline = Date.now() + (options.budgetMs ?? PRUNE_BUDGET_MS);
  for (const name of PRUNED_COLLECTIONS)
    result[name] = await pruneCollection(db, name, cutoff, deadline, options.page ?? PRUNE_PAGE);
  if (Object.values(result).some((deleted) => deleted > 0))
    logger.info({ ...result, retention_days: options.retentionDays }, 'expired email records pruned');
  return result;
}
