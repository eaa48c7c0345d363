/**
 * Runs async work one at a time per key, in arrival order, within this process.
 *
 * An optimisation on MongoDB, needed on FerretDB for one replica; never what
 * makes several replicas correct (docs/scaling.md).
 *
 * MongoDB applies each update to one document atomically, so two writers in
 * two processes never lose each other's fields, and what must happen once
 * (one email per key, one answer per Idempotency-Key, one welcome email per
 * user) rests on inserts of a unique `_id`, atomic on both databases. FerretDB
 * 1.24 (the embedded/CI database) reads, modifies and writes a document back
 * without isolation: concurrent updates of one document lose writes (measured:
 * 50 concurrent `$inc` → 16; a conditional `status: {$in}` update can
 * overwrite a newer status). Serialising the writes to one key inside the
 * process makes the embedded single-replica default correct there too; across
 * processes on FerretDB, updates of one document can still overwrite each
 * other (measured with `npm run test:scale`: signup counts, docs/scaling.md).
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
