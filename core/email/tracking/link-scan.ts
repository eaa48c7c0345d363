/**
 * What the link scanners (link-scan-htmlparser2.ts, link-scan-parse5.ts)
 * find in an HTML document: for each `<a>` start tag with an `href` (the
 * first one, the one a browser uses) and without `clicktracking="off"`
 * (SendGrid's spelling of the opt-out), the attribute's source span
 * (`href="…"`, name to end of value, in UTF-16 offsets) and its decoded value.
 * An empty href (the document itself) is no link: not reported (the
 * tokenizers' source spans of a missing value, `<a href=>`, differ).
 */
export interface HrefSpan {
  start: number;
  end: number;
  /** The value with character references decoded (`&amp;` → `&`). */
  href: string;
}

/** Characters tokenised between two yields to the event loop (tens of milliseconds at most). */
export const SLICE = 64 * 1024;

/**
 * Feeds `html` to `write` in slices, yielding to the event loop between them:
 * a 2 MB body never holds the event loop for long (tokenizers carry their
 * source offsets across slices).
 */
export async function inSlices(html: string, write: (chunk: string) => void): Promise<void> {
  for (let at = 0; at < html.length; at += SLICE) {
    if (at > 0) await new Promise((resolve) => setImmediate(resolve));
    write(html.slice(at, at + SLICE));
  }
}

/** ASCII-only lower case, as HTML compares tag and attribute names (`K`, U+212A, stays itself). */
export const asciiLower = (name: string): string => name.replace(/[A-Z]+/g, (s) => s.toLowerCase());

/** SendGrid's per-link opt-out: `<a clicktracking="off">`. */
export const isOptOut = (value: string): boolean => value.trim().toLowerCase() === 'off';

/**
 * Links as a render thread hands them over: offsets in typed arrays and the
 * hrefs in one string, which cross between threads as a few blocks of memory
 * (rebuilding tens of thousands of link objects held the receiving event loop).
 */
export interface PackedLinks {
  starts: Int32Array;
  ends: Int32Array;
  /** Where each href ends in `hrefs` (each starts where the previous one ended). */
  hrefEnds: Int32Array;
  hrefs: string;
}

export function packLinks(links: readonly HrefSpan[]): PackedLinks {
  const packed = {
    starts: new Int32Array(links.length),
    ends: new Int32Array(links.length),
    hrefEnds: new Int32Array(links.length),
    hrefs: '',
  };
  let length = 0;
  links.forEach((link, i) => {
    packed.starts[i] = link.start;
    packed.ends[i] = link.end;
    packed.hrefEnds[i] = length += link.href.length;
  });
  packed.hrefs = links.map((link) => link.href).join('');
  return packed;
}

export function* unpackLinks(packed: PackedLinks): Generator<HrefSpan> {
  let from = 0;
  for (let i = 0; i < packed.starts.length; i++) {
    const to = packed.hrefEnds[i]!;
    yield { start: packed.starts[i]!, end: packed.ends[i]!, href: packed.hrefs.slice(from, to) };
    from = to;
  }
}
