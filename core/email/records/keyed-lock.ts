/**
 * Runs async work one at a time per key, in arrival order.
 *
 * Why: MongoDB applies each update to one document atomically, but FerretDB
 * 1.24 (the embedded/CI database) does not: concurrent updates of the same
 * document lose writes (measured: 50 concurrent `$inc` → 16; a conditional
 * `status: {$in}` update can overwrite a newer status). Serialising the
 * writes to one email record inside the process makes the status machine
 * correct there too. Across processes (gateway and worker both writing) only
 * MongoDB's per-document atomicity protects it.
 */
export class KeyedLock {
  private readonly tails = new Map<string, Promise<unknown>>();

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const current = previous.then(work, work);
    const tail = current.catch(() => undefined);
    this.tails.set(key, tail);
    try {
      return await current;
    } finally {
      // Forget the key once nothing is queued behind this run.
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /**
   * Runs `work` holding the locks of all `keys` (a batch write). Taken in
   * sorted order, so two batches never wait on each other in a cycle.
   */
  async runAll<T>(keys: readonly string[], work: () => Promise<T>): Promise<T> {
    const sorted = [...new Set(keys)].sort();
    const hold = (i: number): Promise<T> =>
      i === sorted.length ? work() : this.run(sorted[i]!, () => hold(i + 1));
    return hold(0);
  }
}
