import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { renderEmail } from '../../../templates/engine.ts';
import { invoiceBody } from '../../../test/support/sample-emails.ts';
import { findLinks } from './link-rewriter.ts';
import { SLICE } from './link-scan.ts';
import { scanHrefsFast } from './link-scan-htmlparser2.ts';
import { scanHrefsWhatwg } from './link-scan-parse5.ts';

/**
 * The fast scanner (htmlparser2) must find exactly the links the WHATWG
 * tokenizer (parse5) finds, or hand the document over. Documents are built
 * from fragments of ordinary and odd markup, so the generator reaches the
 * places where the two tokenizers differ.
 */

const ENTITIES = [
  '&amp;',
  '&amp',
  '&ampx',
  '&lt;&gt;',
  '&#65;',
  '&#x41;',
  '&#0;',
  '&#128;',
  '&#xD800;',
  '&#x110000;',
  '&notin;',
  '&noti',
  '&notit;',
  '&NotAnEntity;',
  '&quot;',
  '&#39;',
  '&',
];

/** Markup the fast scanner reads itself. */
const ORDINARY = [
  'text ',
  ' ',
  '\n',
  '\r\n',
  '\r',
  '=',
  '/',
  '"',
  "'",
  '>',
  '< x',
  '<3',
  '</>',
  '</ p>',
  ...ENTITIES,
  '<p>',
  '</p>',
  '<div class="c">',
  '</div>',
  '<br/>',
  '<img src="https://img.example/p.gif" alt="">',
  '<a href="https://a.example/x">',
  "<a href='https://b.example/?a=1&amp;b=2'>",
  '<a href=https://c.example/>',
  '<A HREF="HTTPS://D.EXAMPLE">',
  '<a clicktracking="off" href="https://e.example">',
  '<a href="https://f.example" clicktracking=OFF>',
  '<a href="https://g.example" ClickTracking=" off ">',
  '<a href="https://h1.example" href="https://h2.example">',
  '<a\nhref\n=\n"https://i.example">',
  '<a href="https://j.example/?',
  '">',
  '<a data-x="<a href=https://k.example>" href="https://k2.example">',
  '<a href',
  '<a href=',
  '<a href="',
  '<a',
  ' href="https://l.example"',
  '<a xlink:href="https://m.example">',
  '<a href="https://n.example/\r\nx\ry">',
  '<a/href="https://o.example">',
  '<a / href="https://p.example" />',
  '<a href=https://q.example/&amp;q=1>',
  '<a href="https://r.example"/>',
  '<abbr href="https://s.example">',
  '<a=x href="https://t.example">',
  '<a href="https://u.example" href>',
  '<area href="https://v.example">',
  '</a>',
  '<!-- comment -->',
  '<!-->',
  '<!--->',
  '<!--',
  '-->',
  '<!-- <a href="https://w.example"> -->',
  '<!DOCTYPE html>',
  '<!x>',
  '<?xml version="1.0"?>',
  '<![endif]>',
  '<!--[if mso]>',
  '<![endif]-->',
  '<style>',
  'a[href="https://x.example"]{}',
  '</style>',
  '<title>',
  '</title>',
  '<textarea>',
  '</textarea>',
  '<xmp>',
  '</xmp>',
  '<a href="https://y.example/?x=&#9;&#10;">',
];

/** Markup where the tokenizers differ, or may: the fast scanner must hand these over. */
const ODD = [
  '<script>',
  '</script>',
  '<!--<script>',
  '<noscript>',
  '<iframe>',
  '<noembed>',
  '<noframes>',
  '<plaintext>',
  '<svg>',
  '</svg>',
  '<math>',
  '<![CDATA[',
  ']]>',
  '</p title=">">',
  '</p x="',
  '</a >',
  '</a/>',
  '<!-- --!>',
  '--!>',
  '</style/>',
  '</title/>',
  '<title/>',
  '<style/>',
  '\0',
  '<a href="https://z.example/\0">',
  '<script><!--<script>',
  '</script><a href="https://sc.example">',
  '<svg><style>',
  '<svg><title>',
  '<svg><![CDATA[',
  '<math><style>',
  '<title>x</title/>',
  '<textarea></textarea/>',
  '<p><![CDATA[x>',
];

const documentOf = (fragments: readonly string[]) =>
  fc.array(fc.constantFrom(...fragments), { maxLength: 40 }).map((parts) => parts.join(''));

describe('link scanners', () => {
  it('the fast scanner finds what the WHATWG tokenizer finds in ordinary markup, without handing over', async () => {
    await fc.assert(
      fc.asyncProperty(documentOf(ORDINARY), async (html) => {
        const fast = await scanHrefsFast(html);
        assert.ok(fast, `handed over: ${JSON.stringify(html)}`);
        assert.deepEqual(fast, await scanHrefsWhatwg(html), JSON.stringify(html));
      }),
      { numRuns: 3000 },
    );
  });

  it('with odd markup mixed in, the links found are always the WHATWG tokenizer’s', async () => {
    let handedOver = 0;
    await fc.assert(
      fc.asyncProperty(documentOf([...ORDINARY, ...ODD, ...ODD]), async (html) => {
        if ((await scanHrefsFast(html)) === undefined) handedOver++;
        assert.deepEqual(await findLinks(html), await scanHrefsWhatwg(html), JSON.stringify(html));
      }),
      { numRuns: 3000 },
    );
    assert.ok(
      handedOver > 100,
      `only ${handedOver} documents were handed over: the generator misses odd markup`,
    );
  });

  it('sees an end tag the standard reads, `</title/>`, split across two slices', async () => {
    // The slice boundary falls inside `</title/`: the link after it is outside the title.
    const html = `<title>${'x'.repeat(SLICE - 10)}</title/><a href="https://after.example/">after</a>`;
    assert.equal(html.indexOf('</title/'), SLICE - 3);
    const links = await findLinks(html);
    assert.deepEqual(links, await scanHrefsWhatwg(html));
    assert.deepEqual(
      links.map((l) => l.href),
      ['https://after.example/'],
    );
  });

  it('reads the templates’ own HTML (head, style, conditional comments) without handing over', async () => {
    const body = invoiceBody();
    const { html } = renderEmail({
      templateId: 'invoice',
      data: body['template_data'] as Record<string, string>,
      subject: String(body['subject']),
      trackingPixelUrl: 'https://mailroom.example/api/email/track?view_key=x',
    });
    const fast = await scanHrefsFast(html);
    assert.ok(fast && fast.length > 0);
    assert.deepEqual(fast, await scanHrefsWhatwg(html));
  });
});
