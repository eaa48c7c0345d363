import { scanHrefsFast } from './link-scan-htmlparser2.ts';
import { scanHrefsWhatwg } from './link-scan-parse5.ts';
import type { HrefSpan } from './link-scan.ts';

export { SLICE } from './link-scan.ts';

/**
 * Rewrites the `href` of every `<a>` in an HTML document, leaving every other
 * byte as it was.
 *
 * An `<a href>` is found exactly where a mail client's HTML parser finds one
 * (the WHATWG tokenizer's reading): not inside comments, scripts, styles or
 * attribute values, with entities decoded (`&amp;` in an href is `&`),
 * case-insensitive names, any quoting. Ordinary markup is scanned by
 * htmlparser2's tokenizer (link-scan-htmlparser2.ts), which gives up on the
 * constructs where it reads HTML differently from the standard; those
 * documents are scanned by parse5's WHATWG tokenizer (link-scan-parse5.ts).
 * A test feeds both generated odd markup and requires the same links.
 *
 * For each link `rewrite` gets the decoded href and answers the new URL, or
 * undefined to leave the link alone; the attribute's source span (`href="…"`)
 * is then replaced with `href="<new URL, attribute-escaped>"`. Nothing else
 * is re-serialised, so the rest of the HTML, the link's other attributes
 * included, is unchanged byte for byte.
 *
 * `<a clicktracking="off">` (SendGrid's spelling) is never passed to `rewrite`.
 */

export type RewriteHref = (href: string) => string | undefined;

/** Links rewritten between two yields to the event loop (a few milliseconds of work). */
const LINKS_PER_SLICE = 500;

/** The links of `html`, as the WHATWG tokenizer finds them. */
export async function findLinks(html: string): Promise<HrefSpan[]> {
  return (await scanHrefsFast(html)) ?? (await scanHrefsWhatwg(html));
}

/**
 * `html` with its links rewritten. `links`: the links of `html` when they
 * were already found (a render thread finds those of a caller's HTML).
 */
export async function rewriteLinks(
  html: string,
  rewrite: RewriteHref,
  links?: Iterable<HrefSpan>,
): Promise<string> {
  const parts: string[] = [];
  let at = 0;
  let done = 0;
  for (const link of links ?? (await findLinks(html))) {
    // Signing is cheap per link, but 2 MB of links (80,000) in one go would hold the event loop.
    if (++done % LINKS_PER_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
    const replacement = rewrite(link.href);
    if (replacement === undefined) continue;
    parts.push(html.slice(at, link.start), `href="${escapeAttribute(replacement)}"`);
    at = link.end;
  }
  if (at === 0) return html;
  parts.push(html.slice(at));
  return parts.join('');
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
