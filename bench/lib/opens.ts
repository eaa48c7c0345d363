import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Collection, Db } from 'mongodb';
import type { EmailRecord } from '../../core/email/records/record.ts';
import type { BenchEnv } from '../env.ts';
import type { LoadResult } from './load.ts';
import { invoiceRecord } from './records.ts';

/**
 * The tracking paths' records: sent emails, in `pools` pools of `size`, one
 * pool per measurement of ours (the warm-up's first, then one per round), so
 * each measurement opens (or clicks) emails nobody opened before and the
 * bench can check every one of them got recorded.
 */
export async function seedPools(env: BenchEnv, pools: number, size: number): Promise<EmailRecord[][]> {
  const emails = env.database.db.collection<EmailRecord>('emails');
  const all = Array.from({ length: pools * size }, () =>
    invoiceRecord({
      emailId: randomUUID(),
      to: 'customer@example.com',
      subject: 'Invoice INV-1',
      status: 'sent',
      providerId: 'bench',
    }),
  );
  for (let i = 0; i < all.length; i += 1000) await emails.insertMany(all.slice(i, i + 1000));
  return Array.from({ length: pools }, (_, p) => all.slice(p * size, (p + 1) * size));
}

/**
 * Every open (or click) written before the next measurement: the gateway
 * answers at once and writes behind in batches, so after each of our
 * measurements the bench waits until the database has all of them (no
 * measurement shares the machine with the previous one's writes), and fails
 * the run if one is missing (a path that answers fast by dropping them).
 *
 * A measurement asks its pool's records in order, starting over after the
 * last; `answered` requests over `connections` connections mean at least the
 * first `answered - connections` were answered (the rest may have been in
 * flight at the end), and those are checked. Repeats of a record coalesce in
 * the gateway's buffer: they are answered like first hits but written once
 * per batch, so the wait covers each record's first write.
 */
export function recordedAfterEachMeasurement(
  db: Db,
  pools: EmailRecord[][],
  field: 'opened' | 'clicked',
  connections: number,
  /**
   * Read the records by `_id`, 50 at a time, instead of one `{ _id: { $in } }`
   * count: on a grown database (BENCH_RECORDS) that count would scan every
   * record on FerretDB (minutes at a million).
   */
  options: { readEach?: boolean } = {},
) {
  const emails: Collection<EmailRecord> = db.collection<EmailRecord>('emails');
  const readEach = async (ids: string[]) => {
    let count = 0;
    for (let i = 0; i < ids.length; i += 50) {
      const docs = await Promise.all(
        ids.slice(i, i + 50).map((_id) => emails.findOne({ _id }, { projection: { [field]: 1 } })),
      );
      count += docs.filter((d) => d?.[field] === true).length;
    }
    return count;
  };
  const totals = { records: 0, drainSeconds: 0 };
  return {
    totals,
    async after(result: LoadResult, round: number) {
      const pool = pools[round + 1]!;
      const ids = pool
        .slice(0, Math.max(0, Math.min(pool.length, result.answered - connections)))
        .map((r) => r._id);
      const count = () =>
        options.readEach ? readEach(ids) : emails.countDocuments({ _id: { $in: ids }, [field]: true });
      const started = performance.now();
      const deadline = Date.now() + Math.max(60_000, ids.length * 200);
      let done = await count();
      while (done !== ids.length && Date.now() < deadline) {
        // Not too often: on FerretDB this count scans, and competes with the writes it waits for.
        await new Promise((r) => setTimeout(r, 500));
        done = await count();
      }
      if (done !== ids.length)
        throw new Error(`${ids.length - done} of ${ids.length} ${field} emails were not recorded in time`);
      totals.records += ids.length;
      totals.drainSeconds += (performance.now() - started) / 1000;
    },
  };
}
