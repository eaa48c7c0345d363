import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createGroupCommit } from './group-commit.ts';

describe('group commit', () => {
  it('writes a lone submission at once, and what arrives meanwhile as one write', async () => {
    const writes: number[][] = [];
    let release: () => void = () => {};
    const commit = createGroupCommit<number>(async (items) => {
      writes.push(items);
      if (writes.length === 1) await new Promise<void>((r) => (release = r));
    }, 100);
    const first = commit.submit([1]);
    assert.deepEqual(writes, [[1]], 'the first write starts without waiting');
    const later = [commit.submit([2]), commit.submit([3, 4]), commit.submit([5])];
    release();
    await Promise.all([first, ...later]);
    assert.deepEqual(writes, [[1], [2, 3, 4, 5]]);
  });

  it('fails every caller of a failed write, and only them', async () => {
    let calls = 0;
    const commit = createGroupCommit<string>(async () => {
      calls++;
      await new Promise((r) => setTimeout(r, 5));
      if (calls === 2) throw new Error('disk full');
    }, 100);
    const first = commit.submit(['a']);
    const failing = [commit.submit(['b']), commit.submit(['c'])];
    await first;
    for (const p of failing) await assert.rejects(p, /disk full/);
    await commit.submit(['d']);
    assert.equal(calls, 3);
  });

  it('never splits a caller and keeps writes to the size limit', async () => {
    const writes: number[][] = [];
    const commit = createGroupCommit<number>(async (items) => {
      writes.push(items);
      await new Promise((r) => setTimeout(r, 1));
    }, 3);
    await Promise.all([commit.submit([0]), commit.submit([1, 2]), commit.submit([3, 4]), commit.submit([5])]);
    assert.deepEqual(writes, [[0], [1, 2], [3, 4, 5]]);
  });

  it('fails only the callers whose items a write reports as failed', async () => {
    let release: () => void = () => {};
    const commit = createGroupCommit<string>(async (items) => {
      if (items[0] === 'first') await new Promise<void>((r) => (release = r));
      // The write's answer: item 2 of this write was refused (a duplicate, say).
      return items.length > 1 ? new Map([[2, new Error(`refused ${items[2]}`)]]) : undefined;
    }, 100);
    const first = commit.submit(['first']);
    const later = [commit.submit(['a']), commit.submit(['b', 'c']), commit.submit(['d'])];
    release();
    await first;
    const settled = await Promise.allSettled(later);
    assert.deepEqual(
      settled.map((s) => (s.status === 'rejected' ? String(s.reason) : 'ok')),
      ['ok', 'Error: refused c', 'ok'],
    );
  });
});
