import { Tokenizer, type TokenizerCallbacks } from 'htmlparser2';
import { asciiLower, inSlices, isOptOut, type HrefSpan } from './link-scan.ts';

/**
 * The fast link scanner: htmlparser2's tokenizer, which skips through text,
 * comments and raw text to the next `<` (several times faster than the WHATWG
 * state machine of link-scan-parse5.ts: docs/benchmarks.md).
 *
 * It tokenises start tags and their attributes as the standard does (any
 * quoting, entities decoded in attribute mode, ASCII case-insensitive names,
 * the first of repeated attributes), and so do its text, comment, style,
 * title, textarea and xmp states on ordinary markup. Where its tokenizer
 * departs from the standard's, it gives up (answers `undefined`) and the
 * caller scans with the WHATWG tokenizer instead, so the links found are
 * always the ones a browser's parser finds:
 * - elements whose content the standard reads as text and htmlparser2 does
 *   not: script (its escape states), iframe, noembed, noframes, noscript,
 *   plaintext; and svg / math (foreign content, where style and title are
 *   ordinary elements and CDATA sections exist);
 * - `<![CDATA[` in HTML (a bogus comment to the next `>` in the standard);
 * - an end tag with anything between its name and `>` (the standard reads
 *   attributes there, whose quotes may hold a `>`);
 * - a comment holding `--!>` (which ends a comment in the standard);
 * - a self-closing `<title/>`, `<style/>`… (the slash is ignored by the
 *   standard), or raw text holding `</title/` (an end tag for the standard);
 * - a NUL character (the standard replaces it).
 */

/** Elements after which the standard's tokenizer reads text where htmlparser2 reads markup. */
const GIVE_UP_AT = new Set([
  'script',
  'iframe',
  'noembed',
  'noframes',
  'noscript',
  'plaintext',
  'svg',
  'math',
]);
/** Raw text and RCDATA elements htmlparser2 tokenises as the standard does (up to the cases above). */
const RAW_TEXT = new Set(['style', 'title', 'textarea', 'xmp']);
const GT = 0x3e;

export async function scanHrefsFast(html: string): Promise<HrefSpan[] | undefined> {
  if (html.includes('\0')) return undefined;
  const spans: HrefSpan[] = [];
  let odd = false;
  // The start tag being read.
  let tagName = '';
  let isLink = false;
  let attrName = '';
  let attrStart = 0;
  let attrValue = '';
  let href: HrefSpan | undefined;
  let clickTracking: string | undefined;
  // The raw text element whose content is being read, if any.
  let rawText = '';

  const endStartTag = (selfClosing: boolean) => {
    if (isLink && href?.href && !(clickTracking !== undefined && isOptOut(clickTracking))) spans.push(href);
    if (RAW_TEXT.has(tagName)) {
      if (selfClosing) odd = true;
      else rawText = tagName;
    }
    isLink = false;
  };

  const callbacks: TokenizerCallbacks = {
    onopentagname(start, end) {
      tagName = asciiLower(html.slice(start, end));
      if (GIVE_UP_AT.has(tagName)) odd = true;
      isLink = tagName === 'a';
      href = undefined;
      clickTracking = undefined;
    },
    onattribname(start, end) {
      if (!isLink) return;
      attrName = asciiLower(html.slice(start, end));
      attrStart = start;
      attrValue = '';
    },
    onattribdata(start, end) {
      if (isLink) attrValue += html.slice(start, end);
    },
    onattribentity(codePoint) {
      if (isLink) attrValue += String.fromCodePoint(codePoint);
    },
    onattribend(_quote, end) {
      if (!isLink) return;
      // The standard's input stream turns CR LF and lone CR into LF.
      if (attrName === 'href' && !href)
        href = { start: attrStart, end, href: attrValue.replace(/\r\n?/g, '\n') };
      else if (attrName === 'clicktracking' && clickTracking === undefined) clickTracking = attrValue;
    },
    onopentagend: () => endStartTag(false),
    onselfclosingtag: () => endStartTag(true),
    onclosetag(_start, end) {
      if (html.charCodeAt(end) !== GT) odd = true;
      rawText = '';
    },
    ontext(start, end) {
      if (!rawText) return;
      // Raw text arrives in pieces (one per slice): look back far enough to see a split `</title/`.
      const endTag = `</${rawText}/`;
      const from = Math.max(0, start - endTag.length + 1);
      if (asciiLower(html.slice(from, end)).includes(endTag)) odd = true;
    },
    oncomment(start, end) {
      // Within the comment only: an unbounded indexOf from each comment made
      // a document of many comments quadratic.
      if (html.slice(start, end).includes('--!>')) odd = true;
    },
    oncdata: () => {
      odd = true;
    },
    ondeclaration: () => undefined,
    onprocessinginstruction: () => undefined,
    ontextentity: () => undefined,
    onend: () => undefined,
  };
  const tokenizer = new Tokenizer({ decodeEntities: true }, callbacks);
  await inSlices(html, (chunk) => {
    if (!odd) tokenizer.write(chunk);
  });
  if (!odd) tokenizer.end();
  return odd ? undefined : spans;
}
