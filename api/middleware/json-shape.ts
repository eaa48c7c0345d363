/**
 * The shape of a JSON text, checked while it streams in, before anything
 * parses it: how deep it nests, how many values it holds, and how many items
 * one array holds.
 *
 * Why: `JSON.parse` takes time in the number of values and the nesting, not
 * only the bytes (22 million nested `[` took 14 s, 45 MB of `{},` 4 s, while
 * 45 MB of one base64 string takes 0.1 s), and every later walk over the
 * parsed value (validation, hashing an Idempotency-Key's body) recurses per
 * level. Bounding both makes parsing linear in the bytes at a small constant.
 * No field of any route takes more than 100 items, but a validator that
 * reports every error reports one per item of a wrong array (99,990 numbers
 * in `tags` held the event loop 17–126 ms, 99,990 addresses in `to` 30–87
 * ms): arrays are bounded too, well above what any field takes.
 *
 * One pass over the bytes with a constant-size state, chunk by chunk, so the
 * check itself is linear and never holds the event loop for longer than one
 * chunk takes. Structural characters are ASCII, so UTF-8 needs no decoding
 * here. Malformed JSON is not this scanner's concern: the parser refuses it
 * afterwards; the counts of a malformed text are merely approximate.
 */

/** Deepest nesting a request body may have (`{"a":[1]}` nests 2 deep). */
export const MAX_JSON_DEPTH = 32;
/**
 * Most values (objects, arrays, strings, numbers, booleans, nulls; object
 * keys not counted) a request body may hold. The largest valid body, a bulk of
 * 100 emails with every field at its bound, holds about 35,000.
 */
export const MAX_JSON_VALUES = 100_000;
/** Most items one array of a request body may hold (the largest field, a bulk's `emails`, takes 100). */
export const MAX_JSON_ARRAY_ITEMS = 1_000;

export const jsonTooDeep = (max: number) => `request body nested too deeply. maximum depth is ${max}.`;
export const jsonTooManyValues = (max: number) =>
  `request body has too many values. maximum is ${max.toLocaleString('en')}.`;
export const jsonArrayTooLong = (max: number) =>
  `request body array too long. maximum is ${max.toLocaleString('en')} items.`;

/** A body over a shape bound; answered 400 with `message`. */
export class JsonShapeError extends Error {}

const QUOTE = 0x22;
/** `chunk.indexOf(byte, from)`, or the chunk's length when it does not occur. */
const indexOrEnd = (chunk: Buffer, byte: number, from: number): number => {
  const at = chunk.indexOf(byte, from);
  return at < 0 ? chunk.length : at;
};
const BACKSLASH = 0x5c;
/** Bytes of a string looked at one by one before indexOf takes over. */
const NEAR = 32;
const OBJECT = 1;
const ARRAY = 2;

/** Longest object key remembered for an array's own message (the keys that have one are short). */
const KEY_BYTES = 32;

export class JsonShapeScanner {
  private readonly stack: Uint8Array;
  /** Items so far of the array open at each depth. */
  private readonly items: Uint32Array;
  /**
   * The latest key read in the object open at each depth (undefined: longer
   * than KEY_BYTES), so an array past the bound is named by its field: only
   * when the route has messages of its own.
   */
  private readonly keys: Array<string | undefined>;
  /** Inside a key: where its unread part starts in the current chunk. */
  private keyStart: number | undefined;
  /** Inside a key: its part read from earlier chunks (undefined once over KEY_BYTES). */
  private keyText: string | undefined = '';
  private depth = 0;
  private values = 0;
  private inString = false;
  private escaped = false;
  /** Inside a number, `true`, `false` or `null` (counted once, at its first character). */
  private inLiteral = false;
  /** The next string is an object key (after `{` or an object's `,`): not a value. */
  private expectKey = false;

  constructor(
    private readonly maxDepth = MAX_JSON_DEPTH,
    private readonly maxValues = MAX_JSON_VALUES,
    private readonly maxItems = MAX_JSON_ARRAY_ITEMS,
    /**
     * A field's own message for its array past `maxItems`, by key (the
     * route's limit in the interface's words: a bulk of 1,001 emails is
     * `too many emails. maximum is 100.`, as one of 101 is).
     */
    private readonly arrayMessages?: Readonly<Record<string, string>>,
  ) {
    this.stack = new Uint8Array(maxDepth + 1);
    this.items = new Uint32Array(maxDepth + 1);
    this.keys = new Array<string | undefined>(maxDepth + 1);
  }

  /** A value starts at `depth`: one more item when that is an array. */
  private item(depth: number): void {
    if (this.stack[depth] === ARRAY && ++this.items[depth]! > this.maxItems) {
      const key = depth > 0 && this.stack[depth - 1] === OBJECT ? this.keys[depth - 1] : undefined;
      const own = key === undefined ? undefined : this.arrayMessages?.[key];
      throw new JsonShapeError(own ?? jsonArrayTooLong(this.maxItems));
    }
  }

  /** Scans the next bytes of the text; throws JsonShapeError past a bound. */
  write(chunk: Buffer): void {
    // The state lives in locals while the chunk is scanned (the hot loop), and
    // goes back to the fields at the end (or before a bound is reported).
    const { stack, maxDepth, maxValues } = this;
    let { depth, values, inString, escaped, inLiteral, expectKey } = this;
    const n = chunk.length;
    let i = 0;
    // Where indexOf found the chunk's next `"` and `\\` (n: none left), reused
    // until passed, so each search looks at every byte once.
    let quote = -1;
    let backslash = -1;
    try {
      while (i < n) {
        if (inString) {
          // Only `"` and `\\` matter inside a string. The next few bytes are
          // looked at here (escapes come in runs: a text full of \n); past
          // them, the native indexOf jumps to the next `"` or `\\` (a base64
          // attachment is one long jump).
          if (escaped) {
            escaped = false;
            i++;
            continue;
          }
          let at = i;
          const near = Math.min(n, i + NEAR);
          while (at < near && chunk[at] !== QUOTE && chunk[at] !== BACKSLASH) at++;
          if (at === near && at < n) {
            if (quote < at) quote = indexOrEnd(chunk, QUOTE, at);
            if (backslash < at) backslash = indexOrEnd(chunk, BACKSLASH, at);
            at = Math.min(quote, backslash);
          }
          if (at === n) i = n;
          else if (chunk[at] === QUOTE) {
            inString = false;
            i = at + 1;
            if (this.keyStart !== undefined) this.endKey(chunk, at, depth);
          } else {
            escaped = true;
            i = at + 1;
          }
          continue;
        }
        const c = chunk[i++]!;
        if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
          inLiteral = false;
        } else if (c === QUOTE) {
          inLiteral = false;
          inString = true;
          if (expectKey) {
            expectKey = false;
            if (this.arrayMessages) {
              this.keyStart = i;
              this.keyText = '';
            }
          } else {
            if (++values > maxValues) throw new JsonShapeError(jsonTooManyValues(maxValues));
            this.item(depth);
          }
        } else if (c === 0x7b || c === 0x5b) {
          // { [
          inLiteral = false;
          if (++values > maxValues) throw new JsonShapeError(jsonTooManyValues(maxValues));
          if (depth === maxDepth) throw new JsonShapeError(jsonTooDeep(maxDepth));
          this.item(depth);
          stack[++depth] = c === 0x7b ? OBJECT : ARRAY;
          this.items[depth] = 0;
          expectKey = c === 0x7b;
        } else if (c === 0x7d || c === 0x5d) {
          // } ]
          inLiteral = false;
          expectKey = false;
          if (depth > 0) depth--;
        } else if (c === 0x2c) {
          // ,
          inLiteral = false;
          expectKey = stack[depth] === OBJECT;
        } else if (c === 0x3a) {
          // :
          inLiteral = false;
          expectKey = false;
        } else if (!inLiteral) {
          // The first character of a number, true, false or null.
          inLiteral = true;
          if (++values > maxValues) throw new JsonShapeError(jsonTooManyValues(maxValues));
          this.item(depth);
        }
      }
    } finally {
      Object.assign(this, { depth, values, inString, escaped, inLiteral, expectKey });
      // A key that goes on in the next chunk: keep what this one held of it.
      if (this.keyStart !== undefined && inString) {
        this.keyText = this.keyPart(chunk, n);
        this.keyStart = 0;
      }
    }
  }

  /** The key read so far, up to `end` of this chunk; undefined once over KEY_BYTES. */
  private keyPart(chunk: Buffer, end: number): string | undefined {
    const start = this.keyStart!;
    if (this.keyText === undefined || this.keyText.length + end - start > KEY_BYTES) return undefined;
    return this.keyText + chunk.toString('latin1', start, end);
  }

  /** The key ended at `end` (its closing quote), in the object at `depth`. */
  private endKey(chunk: Buffer, end: number, depth: number): void {
    this.keys[depth] = this.keyPart(chunk, end);
    this.keyStart = undefined;
  }
}
