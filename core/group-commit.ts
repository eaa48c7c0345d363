/**
 * Group commit: what concurrent callers submit while a write is in flight is
 * written together by the next one, so N callers in the same few
 * milliseconds cost one round trip instead of N, and a lone caller waits for
 * nothing (its write starts at once). One write at a time; each caller's
 * promise settles with the write that carried its items.
 *
 * A write that fails as a whole fails every caller in it. A write may instead
 * resolve with the errors of single items (an unordered bulk write where one
 * document was a duplicate): only the callers of those items are failed.
 */
export interface GroupCommit<T> {
  submit(items: readonly T[]): Promise<void>;
  /** Resolves once nothing is waiting or being written. */
  idle(): Promise<void>;
}

interface Waiting<T> {
  items: readonly T[];
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** Errors of single items of a write, by the item's index in it. */
export type ItemErrors = ReadonlyMap<number, unknown>;

export function createGroupCommit<T>(
  write: (items: T[]) => Promise<void | ItemErrors>,
  /** Items per write at most (a caller's items are never split). */
  maxItems: number,
  /**
   * Time between the starts of two writes at least: work that can wait a
   * little (background hand-overs) is gathered into fewer, larger writes.
   */
  minIntervalMs = 0,
): GroupCommit<T> {
  const waiting: Waiting<T>[] = [];
  let busy = false;
  let lastStart = 0;
  let draining: Promise<void> = Promise.resolve();

  async function drain() {
    // Set and cleared synchronously with the emptiness check: nothing submitted can be left behind.
    busy = true;
    while (waiting.length > 0) {
      const wait = lastStart + minIntervalMs - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      lastStart = Date.now();
      const group: Waiting<T>[] = [waiting.shift()!];
      let count = group[0]!.items.length;
      while (waiting.length > 0 && count + waiting[0]!.items.length <= maxItems) {
        const next = waiting.shift()!;
        group.push(next);
        count += next.items.length;
      }
      try {
        const failed = await write(group.flatMap((g) => g.items));
        settle(group, failed ?? undefined);
      } catch (err) {
        for (const g of group) g.reject(err);
      }
    }
    busy = false;
  }

  /** Resolves each caller of a written group, or fails it with the first error among its items. */
  function settle(group: Waiting<T>[], failed: ItemErrors | undefined) {
    let index = 0;
    for (const g of group) {
      const from = index;
      index += g.items.length;
      let error: { err: unknown } | undefined;
      for (let i = from; failed !== undefined && error === undefined && i < index; i++)
        if (failed.has(i)) error = { err: failed.get(i) };
      if (error) g.reject(error.err);
      else g.resolve();
    }
  }

  return {
    submit(items) {
      if (items.length === 0) return Promise.resolve();
      const done = new Promise<void>((resolve, reject) => waiting.push({ items, resolve, reject }));
      if (!busy) draining = drain();
      return done;
    },
    idle: () => draining,
  };
}
