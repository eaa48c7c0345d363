/**
 * The `custom` template: the caller's own HTML. Kept apart from the Handlebars
 * engine (engine.ts) because it is also what a render thread loads
 * (core/email/html-render-task.ts): as little as possible, so a thread starts fast.
 */
import Handlebars from 'handlebars';
import { convert, type HtmlToTextOptions } from 'html-to-text';
import { trackingPixelTag } from './markup.ts';

/** The `[start, end)` ranges of the HTML's comments (`<!-- … -->`, an unclosed one to the end). Linear. */
function commentRanges(html: string): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  for (let at = html.indexOf('<!--'); at >= 0;) {
    const close = html.indexOf('-->', at + 4);
    const end = close < 0 ? html.length : close + 3;
    ranges.push([at, end]);
    at = html.indexOf('<!--', end);
  }
  return ranges;
}

/**
 * Where the last `</tag>` (any case, blanks before `>`) outside comments
 * starts; -1 when there is none. A `</body>` inside a trailing comment would
 * put the pixel where no client loads it. Linear.
 */
function lastClosingTag(html: string, tag: string, comments: Array<[number, number]>): number {
  const lower = html.toLowerCase();
  const opening = `</${tag}`;
  let c = comments.length - 1;
  for (let at = lower.lastIndexOf(opening); at >= 0; at = lower.lastIndexOf(opening, at - 1)) {
    while (c >= 0 && comments[c]![0] > at) c--;
    const commented = c >= 0 && at < comments[c]![1];
    let i = at + opening.length;
    while (i < lower.length && /\s/.test(lower[i]!)) i++;
    if (!commented && lower[i] === '>') return at;
    if (at === 0) break;
  }
  return -1;
}

/**
 * The caller's HTML is a whole document (else it is wrapped in one): it has
 * an `<html>`, a `<head>` or `<body>` tag, or starts with a doctype (all
 * three tags may be left out of an HTML5 document).
 */
const WHOLE_DOCUMENT = /<(?:html|head|body)[\s>]|^\s*<!doctype\s/i;

/**
 * html-to-text recurses per nesting level: 5,000 nested elements overflowed
 * the stack. Deeper content is cut from the text part (the HTML part is sent
 * as given).
 */
const TEXT_PART_MAX_DEPTH = 200;

/**
 * How the caller's HTML becomes its plain-text part, for a reader of plain
 * text: lines wrapped at 76 (long URLs are not split); headings as written
 * (upper-casing changes words: ß becomes SS); a table's cells in aligned
 * columns, one row per line (by default cells ran together:
 * `Widget$5.00Total$5.00`); an image as its alt text, so a linked banner
 * says what its link is for (images without one are left out); a link as
 * `text [url]`, the URL alone when it is the text.
 */
const TEXT_PART_OPTIONS: HtmlToTextOptions = {
  wordwrap: 76,
  limits: { maxDepth: TEXT_PART_MAX_DEPTH },
  formatters: {
    altText(elem, _walk, builder) {
      const alt = (elem.attribs?.['alt'] ?? '').trim();
      if (alt) builder.addInline(alt);
    },
  },
  selectors: [
    { selector: 'img', format: 'altText' },
    { selector: 'a', options: { hideLinkHrefIfSameAsText: true } },
    ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: { uppercase: false } })),
    { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false, maxColumnWidth: 76 } },
  ],
};

/**
 * The caller's HTML as given (their markup, so not escaped), with the pixel
 * placed before the last </body> — or, for a fragment, wrapped in a minimal
 * document so every message is a complete HTML document — and its text part.
 */
export function renderCustom(
  htmlBody: string,
  subject: string,
  pixelUrl: string | undefined,
): { html: string; text: string } {
  const pixel = pixelUrl === undefined ? '' : trackingPixelTag(pixelUrl);
  let html: string;
  if (WHOLE_DOCUMENT.test(htmlBody)) {
    const comments = commentRanges(htmlBody);
    const bodyEnd = lastClosingTag(htmlBody, 'body', comments);
    const htmlEnd = lastClosingTag(htmlBody, 'html', comments);
    const at = bodyEnd >= 0 ? bodyEnd : htmlEnd;
    if (pixel === '') html = htmlBody;
    else
      html = at >= 0 ? `${htmlBody.slice(0, at)}${pixel}\n${htmlBody.slice(at)}` : `${htmlBody}\n${pixel}\n`;
  } else {
    html = [
      '<!DOCTYPE html>',
      '<html lang="en">',
      '<head>',
      '<meta charset="utf-8">',
      '<meta name="viewport" content="width=device-width, initial-scale=1">',
      `<title>${Handlebars.escapeExpression(subject)}</title>`,
      '</head>',
      '<body>',
      htmlBody,
      ...(pixel === '' ? [] : [pixel]),
      '</body>',
      '</html>',
      '',
    ].join('\n');
  }
  const text = convert(htmlBody, TEXT_PART_OPTIONS);
  return { html, text: `${text.trim()}\n` };
}
