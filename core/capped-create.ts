import type { KeyedLock } from './keyed-lock.ts';

/**
 * Creates one thing under a per-owner cap (a company's webhook endpoints,
 * its API keys) so that concurrent creates never pass it. A count followed
 * by an insert lets every racing request see room: 30 creates at once took
 * a company from 15 endpoints to 39 against a cap of 20.
 *
 * - Within one process, creates for one owner take turns (`lock`), so one
 *   gateway admits exactly up to the cap and refuses the rest.
 * - Across processes, the new thing is counted again after its insert: over
 *   the cap, it is removed and the create refused. The last create standing
 *   counted every other one standing, so the cap holds; two gateways racing
 *   for the last place may both give it up (a 409 the caller can retry).
 */
export async function cappedCreate<T>(options: {
  lock: KeyedLock;
  /** What the cap is counted over (e.g. the company id, with the mode). */
  owner: string;
  cap: number;
  count: () => Promise<number>;
  insert: () => Promise<T>;
  /** Takes back an insert that went over the cap. */
  remove: (created: T) => Promise<unknown>;
}): Promise<T | 'too-many'> {
  const { lock, owner, cap, count, insert, remove } = options;
  return lock.run(owner, async () => {
    if ((await count()) >= cap) return 'too-many';
    const created = await insert();
    if ((await count()) <= cap) return created;
    await remove(created);
    return 'too-many';
  });
}
