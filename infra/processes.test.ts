import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { colorsWanted } from './processes.ts';

describe('colorsWanted (npm run dev colours its output)', () => {
  const tty = { isTTY: true };
  const pipe = { isTTY: false };

  it('colours a terminal, never a file or a pipe', () => {
    assert.equal(colorsWanted(tty, {}), true);
    assert.equal(colorsWanted(pipe, {}), false);
    assert.equal(colorsWanted({}, {}), false);
    assert.equal(colorsWanted(tty, { TERM: 'dumb' }), false);
  });

  it('NO_COLOR turns colours off, whatever else is set', () => {
    assert.equal(colorsWanted(tty, { NO_COLOR: '1' }), false);
    assert.equal(colorsWanted(tty, { NO_COLOR: '1', FORCE_COLOR: '1' }), false);
    assert.equal(colorsWanted(tty, { NO_COLOR: '' }), true);
  });

  it('FORCE_COLOR turns them on (or off) when set', () => {
    for (const on of ['', '1', '2', '3', 'true'])
      assert.equal(colorsWanted(pipe, { FORCE_COLOR: on }), true, on);
    for (const off of ['0', 'false']) assert.equal(colorsWanted(tty, { FORCE_COLOR: off }), false, off);
  });
});
