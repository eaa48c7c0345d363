/**
 * Runs async work one at a time per key, in arrival order, within this process.
 *
 * For a per-company cap (capped-create.ts) it makes one gateway's creates
 * exact; what holds the cap across processes is the count after the insert.
 * For the writes to one email record it is an optimisation, never what makes
 * them correct (docs/scaling.md):
 * concurrent writes to one record would otherwise each pay a round trip only
 * to be applied one after another by the database anyway. MongoDB applies each
 * update to one document atomically, and so does our FerretDB build for updates
 * that name the document by `_id` (infra/ferretdb/README.md, patch 4; upstream
 * FerretDB 1.24 read, modified and wrote a document back without isolation: 100
 * concurrent `$inc` → 4). Every write under this lock selects by `_id`, and what
 * must happen once (one email per key, one answer per Idempotency-Key, one
 * welcome email per user) rests on inserts of a unique `_id`, atomic on both.
 */
export interface KeyedLock {
  run<T>(key: string, work: () => Promise<T>): Promise<T>;
  /**
   * Runs `work` holding the locks of all `keys` (a batch write). Taken in
   * sorted order, so two batches never wait on each other in a cycle.
   */
  runAll<T>(keys: readonly string[], work: () => Promise<T>): Promise<T>;
}

export function createKeyedLock(): KeyedLock {
  const tails = new Map<string, Promise<unknown>>();
  const lock: KeyedLock = {
    async run(key, work) {
      const previous = tails.get(key) ?? Promise.resolve();
      const current = previous.then(work, work);
      const tail = current.catch(() => undefined);
      tails.set(key, tail);
      try {
        return await current;
      } finally {
        // Forget the key once nothing is queued behind this run.
        if (tails.get(key) === tail) tails.delete(key);
      }
    },
    runAll(keys, work) {
      const sorted = [...new Set(keys)].sort();
      const hold = <T>(i: number, last: () => Promise<T>): Promise<T> =>
        i === sorted.length ? last() : lock.run(sorted[i]!, () => hold(i + 1, last));
      return hold(0, work);
    },
  };
  return lock;
}
