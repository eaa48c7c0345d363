import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as nextLoopTurn } from 'node:timers/promises';
import { TURN_MS, takeTurn } from './event-loop-turns.ts';

/** Holds the event loop for `ms` (CPU work, as a render is). */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    /* work */
  }
}

describe('takeTurn', () => {
  it('lets pieces run while the turn has budget, and sends the rest to a later turn', async () => {
    await nextLoopTurn();
    await takeTurn();
    let ranThisTurn = true;
    busy(TURN_MS + 2);
    const later = takeTurn().then(() => ranThisTurn);
    ranThisTurn = false;
    assert.equal(await later, false, 'the piece waited for the loop to go round');
  });

  it('resumes a hand-over before the renders that waited ahead of it', async () => {
    await nextLoopTurn();
    await takeTurn();
    busy(TURN_MS + 2);
    const order: string[] = [];
    const waits = [
      ...['render 1', 'render 2', 'render 3'].map((name) => takeTurn().then(() => order.push(name))),
      takeTurn('handover').then(() => order.push('handover')),
    ];
    await Promise.all(waits);
    assert.equal(order[0], 'handover', order.join(', '));
    assert.deepEqual(order.slice(1), ['render 1', 'render 2', 'render 3']);
  });
});
