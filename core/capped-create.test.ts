import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cappedCreate } from './capped-create.ts';
import { createKeyedLock } from './keyed-lock.ts';

/** A store whose every call yields for a random while, as round trips to a database would. */
function slowStore() {
  const items = new Set<number>();
  const pause = () => new Promise((r) => setTimeout(r, Math.random() * 5));
  let next = 0;
  return {
    items,
    count: async () => {
      await pause();
      return items.size;
    },
    insert: async () => {
      await pause();
      const item = next++;
      items.add(item);
      return item;
    },
    remove: async (item: number) => {
      await pause();
      items.delete(item);
    },
  };
}

describe('cappedCreate', () => {
  it('within one process admits exactly up to the cap', async () => {
    const store = slowStore();
    const lock = createKeyedLock();
    const answers = await Promise.all(
      Array.from({ length: 30 }, () => cappedCreate({ lock, owner: 'c', cap: 20, ...store })),
    );
    assert.equal(answers.filter((a) => a !== 'too-many').length, 20);
    assert.equal(store.items.size, 20);
  });

  it('across processes (a lock each) never passes the cap', async () => {
    for (let round = 0; round < 20; round++) {
      const store = slowStore();
      const locks = [createKeyedLock(), createKeyedLock(), createKeyedLock()];
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          cappedCreate({ lock: locks[i % locks.length]!, owner: 'c', cap: 5, ...store }),
        ),
      );
      const admitted = answers.filter((a) => a !== 'too-many');
      assert.ok(store.items.size <= 5, `round ${round}: ${store.items.size} held`);
      assert.deepEqual(new Set(admitted), store.items, 'what was admitted is what is held');
    }
  });
});
