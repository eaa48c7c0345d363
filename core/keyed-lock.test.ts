import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createKeyedLock } from './keyed-lock.ts';

describe('createKeyedLock', () => {
  it('runs work for one key one at a time, in order, and keys independently', async () => {
    const lock = createKeyedLock();
    const log: string[] = [];
    const step = (key: string, n: number, ms: number) =>
      lock.run(key, async () => {
        log.push(`${key}${n}:start`);
        await new Promise((r) => setTimeout(r, ms));
        log.push(`${key}${n}:end`);
        return n;
      });
    const results = await Promise.all([step('a', 1, 30), step('a', 2, 1), step('b', 1, 5)]);
    assert.deepEqual(results, [1, 2, 1]);
    assert.ok(log.indexOf('a1:end') < log.indexOf('a2:start'), log.join(' '));
    assert.ok(log.indexOf('b1:end') < log.indexOf('a1:end'), 'b does not wait for a');
  });

  it('a failure does not block the next run', async () => {
    const lock = createKeyedLock();
    await assert.rejects(
      lock.run('k', () => Promise.reject(new Error('boom'))),
      /boom/,
    );
    assert.equal(await lock.run('k', async () => 'next'), 'next');
  });
});
