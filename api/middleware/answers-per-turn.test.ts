import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { answersPerTurn } from './answers-per-turn.ts';

/** Answers queued in one turn are written after it, together, in the order they came. */
describe('answers written once per turn', () => {
  it('writes the queued answers after the current turn, in order', async () => {
    const writeThisTurn = answersPerTurn();
    const written: string[] = [];
    for (const name of ['a', 'b', 'c']) writeThisTurn(() => written.push(name));
    assert.deepEqual(written, [], 'nothing is written while the turn runs');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(written, ['a', 'b', 'c']);
  });

  it('writes an answer queued while writing in the next turn, never drops it', async () => {
    const writeThisTurn = answersPerTurn();
    const written: string[] = [];
    writeThisTurn(() => {
      written.push('first');
      writeThisTurn(() => written.push('later'));
    });
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(written, ['first']);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(written, ['first', 'later']);
  });
});
