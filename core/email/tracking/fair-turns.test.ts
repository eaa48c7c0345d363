import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isMailroomError } from '../../errors.ts';
import { createFairTurns } from './fair-turns.ts';

/** A task that runs until released, noting when it started. */
function gate(order: string[], name: string) {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  return {
    task: async () => {
      order.push(name);
      await done;
      return name;
    },
    release,
  };
}

const tick = () => new Promise((r) => setImmediate(r));

/** Fair turns with these options over defaults (one at a time, ten waiting, a minute's wait). */
const turnsOf = (options: Partial<Parameters<typeof createFairTurns>[0]> = {}) =>
  createFairTurns({ concurrency: 1, maxWaiting: 10, maxWaitMs: 60_000, refusal: 'busy', ...options });

/** The message of the 429 a refused task's run rejects with. */
async function refusalOf(run: Promise<unknown>): Promise<string> {
  const err = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(isMailroomError(err) && err.kind === 'rate_limited', String(err));
  return err.message;
}

describe('fair turns between tenants', () => {
  it("one tenant's queue does not hold another's task back: turns go round", async () => {
    const turns = turnsOf({ maxWaiting: 100 });
    const order: string[] = [];
    const a = Array.from({ length: 5 }, (_, i) => gate(order, `a${i}`));
    const b = gate(order, 'b0');
    const c = gate(order, 'c0');
    const runs = [...a.map((g) => turns.run('A', g.task)), turns.run('B', b.task), turns.run('C', c.task)];
    await tick();
    assert.deepEqual(order, ['a0']);
    assert.deepEqual(turns.size, { running: 1, waiting: 6 });
    for (const g of [a[0]!, a[1]!, b, c, a[2]!, a[3]!, a[4]!]) {
      g.release();
      await tick();
      await tick();
    }
    assert.deepEqual(await Promise.all(runs), ['a0', 'a1', 'a2', 'a3', 'a4', 'b0', 'c0']);
    // A's first ran, then each tenant in turn: B and C did not wait for A's other four.
    assert.deepEqual(order, ['a0', 'a1', 'b0', 'c0', 'a2', 'a3', 'a4']);
    assert.deepEqual(turns.size, { running: 0, waiting: 0 });
  });

  it('runs up to its concurrency at once, and refuses a tenant past maxWaiting with 429', async () => {
    const turns = turnsOf({ concurrency: 2, maxWaiting: 2, refusal: 'render queue full' });
    const order: string[] = [];
    const gates = Array.from({ length: 4 }, (_, i) => gate(order, `a${i}`));
    const runs = gates.map((g) => turns.run('A', g.task));
    await tick();
    assert.deepEqual(order, ['a0', 'a1']);
    assert.equal(await refusalOf(turns.run('A', async () => 'never')), 'render queue full');
    // Another tenant still gets its turn.
    const other = turns.run('B', async () => 'b');
    for (const g of gates) g.release();
    assert.deepEqual(await Promise.all([...runs, other]), ['a0', 'a1', 'a2', 'a3', 'b']);
  });

  it('a tenant holds at most perTenant slots: another tenant starts at once, waiting for no one', async () => {
    const turns = turnsOf({ concurrency: 2, perTenant: 1 });
    const order: string[] = [];
    const a = Array.from({ length: 3 }, (_, i) => gate(order, `a${i}`));
    const runs = a.map((g) => turns.run('A', g.task));
    await tick();
    assert.deepEqual(order, ['a0'], 'A alone still holds one slot only');
    const b = gate(order, 'b0');
    const bRun = turns.run('B', b.task);
    await tick();
    assert.deepEqual(order, ['a0', 'b0'], "B started while A's tasks ran and waited");
    for (const g of [...a, b]) {
      g.release();
      await tick();
      await tick();
    }
    assert.deepEqual(await Promise.all([...runs, bRun]), ['a0', 'a1', 'a2', 'b0']);
    assert.deepEqual(turns.size, { running: 0, waiting: 0 });
  });

  it('a failing task frees its slot', async () => {
    const turns = turnsOf();
    const failed = turns.run('A', () => Promise.reject(new Error('boom')));
    const next = turns.run('B', async () => 'b');
    await assert.rejects(failed, /boom/);
    assert.equal(await next, 'b');
  });

  it('a task that waited maxWaitMs for its turn is refused with 429 and never runs', async () => {
    const turns = turnsOf({ maxWaitMs: 50, refusal: 'waited too long' });
    const order: string[] = [];
    const holder = gate(order, 'a0');
    const first = turns.run('A', holder.task);
    assert.equal(await refusalOf(turns.run('A', async () => order.push('never'))), 'waited too long');
    assert.deepEqual(turns.size, { running: 1, waiting: 0 });
    holder.release();
    await first;
    // The slot and the queue are as they should be: the next task runs at once.
    assert.equal(await turns.run('B', async () => 'b'), 'b');
    assert.deepEqual(order, ['a0']);
  });
});
