import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { JsonShapeError, JsonShapeScanner, jsonTooDeep, jsonTooManyValues } from './json-shape.ts';

/** Depth and value count of a parsed JSON value, the slow and obvious way (test inputs are shallow). */
function shapeOf(value: unknown): { depth: number; values: number } {
  if (value === null || typeof value !== 'object') return { depth: 0, values: 1 };
  const children = Array.isArray(value) ? value : Object.values(value);
  const shapes = children.map(shapeOf);
  return {
    depth: 1 + Math.max(0, ...shapes.map((s) => s.depth)),
    values: 1 + shapes.reduce((sum, s) => sum + s.values, 0),
  };
}

/** The scanner's verdict on `text` fed in the given chunk sizes: undefined, or the message it refused with. */
function scan(text: string, chunkSizes: number[], maxDepth: number, maxValues: number): string | undefined {
  const bytes = Buffer.from(text);
  const scanner = new JsonShapeScanner(maxDepth, maxValues);
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
  it('measures depth and value count exactly, however the text is cut into chunks', () => {
    fc.assert(
      fc.property(
        json,
        fc.array(fc.integer({ min: 1, max: 7 }), { maxLength: 5 }),
        fc.integer({ min: 0, max: 7 }),
        fc.integer({ min: 1, max: 60 }),
        ({ value, text }, chunks, maxDepth, maxValues) => {
          const { depth, values } = shapeOf(value);
          // Depth is checked as each container opens, values as each value starts: whichever
          // bound the text crosses first is the one reported.
          const verdict = scan(text, chunks, maxDepth, maxValues);
          if (depth <= maxDepth && values <= maxValues) assert.equal(verdict, undefined);
          else
            assert.ok(
              verdict === jsonTooDeep(maxDepth) || verdict === jsonTooManyValues(maxValues),
              `${verdict} for depth ${depth}, ${values} values`,
            );
          if (depth > maxDepth && values <= maxValues) assert.equal(verdict, jsonTooDeep(maxDepth));
          if (values > maxValues && depth <= maxDepth) assert.equal(verdict, jsonTooManyValues(maxValues));
        },
      ),
      { numRuns: 5000 },
    );
  });

  it('reads brackets, quotes and backslashes inside strings as text, also across chunk boundaries', () => {
    const text = JSON.stringify({ a: '[[[[{{{{', b: 'say \\"[[[\\" \\\\', c: ['\\', '"', '\u00e9[{'] });
    for (let size = 1; size <= text.length; size++) assert.equal(scan(text, [size], 2, 7), undefined);
    assert.equal(scan(text, [3], 1, 7), jsonTooDeep(1));
    assert.equal(scan(text, [3], 2, 6), jsonTooManyValues(6));
  });

  it('stops at the first level past the bound: 22 million `[` cost no more than 33', () => {
    const scanner = new JsonShapeScanner(32, 1_000_000);
    assert.throws(() => scanner.write(Buffer.from(`{"x":${'['.repeat(40)}`)), { message: jsonTooDeep(32) });
  });
});
