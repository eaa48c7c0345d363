import { performance } from 'node:perf_hooks';
import type { Db } from 'mongodb';
import type { EmailRecord } from '../core/email/records/record.ts';
import type { LoadResult } from './lib/load.ts';

/**
 * Every open of a pixel measurement in the database before the next one, as
 * bench/lib/opens.ts checks them, but read by `_id`, 50 at a time: on a
 * grown database a `{ _id: { $in } }` count would scan every record on
 * FerretDB (minutes at a million) and compete with the writes it waits for.
 * `pools[round + 1]` is the pool of measurement `round` (-1: the warm-up);
 * the first `answered - connections` of it were certainly answered.
 */
export function recordedOpens(db: Db, pools: EmailRecord[][], connections: number) {
  const emails = db.collection<EmailRecord>('emails');
  const totals = { records: 0, drainSeconds: 0 };
  const opened = async (ids: string[]) => {
    let count = 0;
    for (let i = 0; i < ids.length; i += 50) {
      const docs = await Promise.all(
        ids.slice(i, i + 50).map((_id) => emails.findOne({ _id }, { projection: { opened: 1 } })),
      );
      count += docs.filter((d) => d?.opened === true).length;
    }
    return count;
  };
  return {
    totals,
    async after(result: LoadResult, round: number) {
      const pool = pools[round + 1]!;
      const ids = pool
        .slice(0, Math.max(0, Math.min(pool.length, result.answered - connections)))
        .map((r) => r._id);
      const started = performance.now();
      const deadline = Date.now() + Math.max(60_000, ids.length * 200);
      let done = await opened(ids);
      while (done !== ids.length && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 500));
        done = await opened(ids);
      }
      if (done !== ids.length)
        throw new Error(`${ids.length - done} of ${ids.length} opens were not recorded in time`);
      totals.records += ids.length;
      totals.drainSeconds += (performance.now() - started) / 1000;
    },
  };
}
