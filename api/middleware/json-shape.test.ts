import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  JsonShapeError,
  JsonShapeScanner,
  jsonArrayTooLong,
  jsonTooDeep,
  jsonTooManyValues,
} from './json-shape.ts';

/** Depth, value count and longest array of a parsed JSON value, the slow and obvious way (test inputs are shallow). */
function shapeOf(value: unknown): { depth: number; values: number; items: number } {
  if (value === null || typeof value !== 'object') return { depth: 0, values: 1, items: 0 };
  const children = Array.isArray(value) ? value : Object.values(value);
  const shapes = children.map(shapeOf);
  return {
    depth: 1 + Math.max(0, ...shapes.map((s) => s.depth)),
    values: 1 + shapes.reduce((sum, s) => sum + s.values, 0),
    items: Math.max(Array.isArray(value) ? value.length : 0, ...shapes.map((s) => s.items)),
  };
}

/** The scanner's verdict on `text` fed in the given chunk sizes: undefined, or the message it refused with. */
function scan(
  text: string,
  chunkSizes: number[],
  maxDepth: number,
  maxValues: number,
  maxItems = Infinity,
  arrayMessages?: Record<string, string>,
): string | undefined {
  const bytes = Buffer.from(text);
  const scanner = new JsonShapeScanner(maxDepth, maxValues, maxItems, arrayMessages);
  let at = 0;
  try {
    for (let i = 0; at < bytes.length; i++) {
      const size = chunkSizes.length ? chunkSizes[i % chunkSizes.length]! : bytes.length;
      scanner.write(bytes.subarray(at, at + size));
      at += size;
    }
  } catch (err) {
    if (err instanceof JsonShapeError) return err.message;
    throw err;
  }
  return undefined;
}

const json = fc.jsonValue({ maxDepth: 6 }).map((value) => ({ value, text: JSON.stringify(value, null, 1) }));

describe('JSON shape scanner', () => {
  it('measures depth, value count and array lengths exactly, however the text is cut into chunks', () => {
    fc.assert(
      fc.property(
        json,
        fc.array(fc.integer({ min: 1, max: 7 }), { maxLength: 5 }),
        fc.integer({ min: 0, max: 7 }),
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 0, max: 8 }),
        ({ value, text }, chunks, maxDepth, maxValues, maxItems) => {
          const { depth, values, items } = shapeOf(value);
          // Depth is checked as each container opens, values and items as each value starts:
          // whichever bound the text crosses first is the one reported.
          const verdict = scan(text, chunks, maxDepth, maxValues, maxItems);
          const crossed = [
            depth > maxDepth && jsonTooDeep(maxDepth),
            values > maxValues && jsonTooManyValues(maxValues),
            items > maxItems && jsonArrayTooLong(maxItems),
          ].filter((message) => message !== false);
          if (crossed.length === 0) assert.equal(verdict, undefined);
          else
            assert.ok(
              crossed.includes(verdict!),
              `${verdict} for ${depth} deep, ${values} values, ${items} items`,
            );
          if (crossed.length === 1) assert.equal(verdict, crossed[0]);
        },
      ),
      { numRuns: 5000 },
    );
  });

  it('counts the items of each array apart: nested and sibling arrays do not add up', () => {
    const text = JSON.stringify({ a: [1, 2, [3, 4, 5], { b: ['x', 'y', 'z'] }], c: [[], [], []] });
    assert.equal(scan(text, [], 32, 100, 4), undefined);
    assert.equal(scan(text, [2], 32, 100, 3), jsonArrayTooLong(3));
    assert.equal(scan(`[${'1,'.repeat(1000)}1]`, [7], 32, 10_000, 1000), jsonArrayTooLong(1000));
  });

  it('reads brackets, quotes and backslashes inside strings as text, also across chunk boundaries', () => {
    const text = JSON.stringify({ a: '[[[[{{{{', b: 'say \\"[[[\\" \\\\', c: ['\\', '"', '\u00e9[{'] });
    for (let size = 1; size <= text.length; size++) assert.equal(scan(text, [size], 2, 7), undefined);
    assert.equal(scan(text, [3], 1, 7), jsonTooDeep(1));
    assert.equal(scan(text, [3], 2, 6), jsonTooManyValues(6));
  });

  it('names an array past the bound by its field when the route has a message for it, however cut', () => {
    const messages = { emails: 'too many emails.', to: 'too many recipients.' };
    const generic = jsonArrayTooLong(3);
    const cases: Array<[string, string | undefined]> = [
      ['{"emails":[1,2,3]}', undefined],
      ['{"emails":[1,2,3,4]}', 'too many emails.'],
      ['{"batchDelay":0, "emails" : [ {}, {}, {}, {} ]}', 'too many emails.'],
      ['{"emails":[{"to":["a","b","c","d"]}]}', 'too many recipients.'],
      ['{"emails":[{"to":["a"],"tags":[1,2,3,4]}]}', generic],
      ['{"tags":[1,2,3,4]}', generic],
      ['[[1,2,3,4]]', generic],
      ['{"to\\u0020":[1,2,3,4]}', generic],
      [`{"${'x'.repeat(40)}":[1,2,3,4]}`, generic],
    ];
    for (const [text, expected] of cases)
      for (const sizes of [[], [1], [2], [3], [7]])
        assert.equal(scan(text, sizes, 32, 1000, 3, messages), expected, `${text} in chunks of ${sizes}`);
  });

  it('stops at the first level past the bound: 22 million `[` cost no more than 33', () => {
    const scanner = new JsonShapeScanner(32, 1_000_000);
    assert.throws(() => scanner.write(Buffer.from(`{"x":${'['.repeat(40)}`)), { message: jsonTooDeep(32) });
  });
});
