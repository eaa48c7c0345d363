/**
 * The `custom` template: the caller's own HTML. Kept apart from the Handlebars
 * engine (engine.ts) because it is also what a render thread loads
 * (core/email/html-render-task.ts): as little as possible, so a thread starts fast.
 */
import Handlebars from 'handlebars';
import { convert } from 'html-to-text';
import { trackingPixelTag } from './markup.ts';

/** Where the last `</tag>` (any case, blanks before `>`) starts; -1 when there is none. Linear. */
function lastClosingTag(html: string, tag: string): number {
  const lower = html.toLowerCase();
  const opening = `</${tag}`;
  for (let at = lower.lastIndexOf(opening); at >= 0; at = lower.lastIndexOf(opening, at - 1)) {
    let i = at + opening.length;
    while (i < lower.length && /\s/.test(lower[i]!)) i++;
    if (lower[i] === '>') return at;
    if (at === 0) break;
  }
  return -1;
}

/**
 * html-to-text recurses per nesting level: 5,000 nested elements overflowed
 * the stack. Deeper content is cut from the text part (the HTML part is sent
 * as given).
 */
const TEXT_PART_MAX_DEPTH = 200;

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
  if (/<html[\s>]/i.test(htmlBody)) {
    const bodyEnd = lastClosingTag(htmlBody, 'body');
    const htmlEnd = lastClosingTag(htmlBody, 'html');
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
  const text = convert(htmlBody, {
    wordwrap: false,
    limits: { maxDepth: TEXT_PART_MAX_DEPTH },
    selectors: [
      { selector: 'img', format: 'skip' },
      { selector: 'a', options: { hideLinkHrefIfSameAsText: true } },
    ],
  });
  return { html, text: `${text.trim()}\n` };
}
