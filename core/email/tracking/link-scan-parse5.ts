import { SAXParser, type StartTag } from 'parse5-sax-parser';
import { inSlices, isOptOut, type HrefSpan } from './link-scan.ts';

/**
 * The reference link scanner: parse5's SAX parser, the WHATWG HTML tokenizer
 * with the tree builder's switches into script, style, textarea, title…
 * text, so an `<a href>` is found exactly where a browser's HTML parser finds
 * one. It reads every character through the standard's state machine (several
 * times the time of link-scan-htmlparser2.ts), so it runs only for the markup the
 * fast scanner hands over (see there).
 */

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

export async function scanHrefsWhatwg(html: string): Promise<HrefSpan[]> {
  const spans: HrefSpan[] = [];
  const scanner = new StartTagScanner({ sourceCodeLocationInfo: true });
  scanner.on('startTag', (tag: StartTag) => {
    if (tag.tagName !== 'a') return;
    const href = tag.attrs.find((a) => a.name === 'href' && !a.prefix);
    if (!href?.value) return;
    const optOut = tag.attrs.find((a) => a.name === 'clicktracking');
    if (optOut && isOptOut(optOut.value)) return;
    const location = (
      tag.sourceCodeLocation as { attrs?: Record<string, { startOffset: number; endOffset: number }> }
    )?.attrs?.['href'];
    if (location) spans.push({ start: location.startOffset, end: location.endOffset, href: href.value });
  });
  await inSlices(html, (chunk) => scanner.scan(chunk, false));
  scanner.scan('', true);
  return spans;
}
