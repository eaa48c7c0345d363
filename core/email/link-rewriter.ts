import { SAXParser, type StartTag } from 'parse5-sax-parser';

/**
 * Rewrites the `href` of every `<a>` in an HTML document, leaving every other
 * byte as it was.
 *
 * The document is tokenised by parse5's SAX parser (the WHATWG HTML
 * tokenizer, with the tree builder's switches into script, style, textarea,
 * title… text), so an `<a href>` is found exactly where a mail client's HTML
 * parser finds one: not inside comments, scripts or attribute values, with
 * entities decoded (`&amp;` in an href is `&`), case-insensitive names, any
 * quoting. For each link `rewrite` gets the decoded href and answers the new
 * URL, or undefined to leave the link alone; the attribute's source span
 * (`href="…"`, from the tokenizer's source locations) is then replaced with
 * `href="<new URL, attribute-escaped>"`. Nothing else is re-serialised, so
 * the rest of the HTML, the link's other attributes included, is unchanged
 * byte for byte.
 *
 * `<a clicktracking="off">` (SendGrid's spelling) is never passed to `rewrite`.
 */

/** Characters tokenised between two yields to the event loop (~30 ms at most). */
export const SLICE = 64 * 1024;

export type RewriteHref = (href: string) => string | undefined;

interface Span {
  start: number;
  end: number;
  text: string;
}

/**
 * parse5's SAX parser with its text left out: only start tags are wanted, and
 * the parser would otherwise build every run of text a character at a time
 * (measured: 2.4× the time of a 5 KB email). Fed straight to the tokenizer,
 * without the stream the SAX parser is, since the input is one string.
 */
class StartTagScanner extends SAXParser {
  override onCharacter(): void {}
  override onWhitespaceCharacter(): void {}
  override onNullCharacter(): void {}

  scan(chunk: string, last: boolean): void {
    this.tokenizer.write(chunk, last);
  }
}

export async function rewriteLinks(html: string, rewrite: RewriteHref): Promise<string> {
  const spans: Span[] = [];
  const scanner = new StartTagScanner({ sourceCodeLocationInfo: true });
  scanner.on('startTag', (tag: StartTag) => {
    if (tag.tagName !== 'a') return;
    const href = tag.attrs.find((a) => a.name === 'href' && !a.prefix);
    if (!href) return;
    const optOut = tag.attrs.find((a) => a.name === 'clicktracking');
    if (optOut && optOut.value.trim().toLowerCase() === 'off') return;
    const location = (
      tag.sourceCodeLocation as { attrs?: Record<string, { startOffset: number; endOffset: number }> }
    )?.attrs?.['href'];
    if (!location) return;
    const replacement = rewrite(href.value);
    if (replacement === undefined) return;
    spans.push({
      start: location.startOffset,
      end: location.endOffset,
      text: `href="${escapeAttribute(replacement)}"`,
    });
  });
  // In slices, yielding between them: a 2 MB body never holds the event loop
  // for long (source offsets run on across slices).
  for (let at = 0; at < html.length; at += SLICE) {
    if (at > 0) await new Promise((resolve) => setImmediate(resolve));
    scanner.scan(html.slice(at, at + SLICE), false);
  }
  scanner.scan('', true);
  if (spans.length === 0) return html;
  const parts: string[] = [];
  let at = 0;
  for (const span of spans) {
    parts.push(html.slice(at, span.start), span.text);
    at = span.end;
  }
  parts.push(html.slice(at));
  return parts.join('');
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
