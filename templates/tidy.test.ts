import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { tidy } from './tidy.ts';

function withoutTrailingBlanks(line: string): string {
  let rest = line;
  while (rest.endsWith(' ') || rest.endsWith('\t')) rest = rest.slice(0, -1);
  return rest;
}

/** What tidy promises, spelled the slow way: per line, then runs of newlines, then the ends. */
const expected = (text: string) =>
  `${text
    .split('\n')
    .map(withoutTrailingBlanks)
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim()}\n`;

describe('tidy', () => {
  it('drops trailing blanks, keeps one blank line of a run, trims the ends', () => {
    assert.equal(tidy('\n\n  Hello \t\n\n\n\nWorld  \n \n\n'), '  Hello\n\nWorld\n'.trimStart());
    assert.equal(tidy('a\nb'), 'a\nb\n');
    assert.equal(tidy('a\n\nb'), 'a\n\nb\n');
    assert.equal(tidy('a\n \t \n\t\nb'), 'a\n\nb\n');
    assert.equal(tidy(''), '\n');
    assert.equal(tidy('x\r\n\r\ny'), 'x\r\n\r\ny\n', 'a line ending in CR is not blank');
  });

  it('gives what the line-by-line definition gives, for any mix of the characters involved', () => {
    // A fixed pseudo-random sequence (no flakiness): 5,000 texts of spaces, tabs, newlines,
    // CR, a no-break space and letters.
    const alphabet = [' ', '\t', '\n', '\n', '\r', '\u00a0', 'a', 'b'];
    let seed = 42;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let i = 0; i < 5000; i++) {
      const length = next() % 40;
      const text = Array.from({ length }, () => alphabet[next() % alphabet.length]).join('');
      assert.equal(tidy(text), expected(text), JSON.stringify(text));
    }
  });

  it('keeps a line of a million spaces linear (it becomes an empty line)', () => {
    assert.equal(tidy(`a\n${' '.repeat(1_000_000)}\nb`), 'a\n\nb\n');
  });
});
