import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TEST_SECRET } from '../../../test/support/env.ts';
import { CLICK_PATH, MAX_TRACKED_LINKS, createClickTracking } from './click-tracking.ts';
import { SLICE, rewriteLinks } from './link-rewriter.ts';

/** Marks each http(s) href it is given, so a test sees exactly what was rewritten. */
const mark = (href: string) => (/^https?:/i.test(href.trim()) ? `https://t.example/?u=${href}` : undefined);

describe('link rewriter', () => {
  it('rewrites http and https hrefs of <a> in any case and quoting, and nothing else', async () => {
    const html =
      '<p><a href="https://a.example/x">A</a> <A HREF=\'http://b.example\'>B</A> ' +
      '<a class=btn href=https://c.example/ target="_blank">C</a></p>';
    assert.equal(
      await rewriteLinks(html, mark),
      '<p><a href="https://t.example/?u=https://a.example/x">A</a> <A href="https://t.example/?u=http://b.example">B</A> ' +
        '<a class=btn href="https://t.example/?u=https://c.example/" target="_blank">C</a></p>',
    );
  });

  it('leaves mailto:, tel:, anchors, relative links, images (the pixel) alone', async () => {
    const html = [
      '<a href="mailto:help@acme.example">mail</a>',
      '<a href="tel:+15551234">call</a>',
      '<a href="#top">top</a>',
      '<a href="/account">relative</a>',
      '<a href="//cdn.example/x">protocol-relative</a>',
      '<a name="anchor">no href</a>',
      '<img src="https://mailroom.example/api/email/track?view_key=abc" width="1" height="1" alt="">',
      '<link href="https://fonts.example/css" rel="stylesheet">',
    ].join('\n');
    const tracking = createClickTracking({ secret: TEST_SECRET, publicBaseUrl: 'https://mailroom.example' });
    assert.equal(await tracking.trackLinks(html, '0f8fad5b-d9cb-469f-a165-70867728950e'), html);
  });

  it('decodes entities in an href and escapes the new value for the attribute', async () => {
    const seen: string[] = [];
    const out = await rewriteLinks('<a href="https://a.example/?x=1&amp;y=2&quot;">x</a>', (href) => {
      seen.push(href);
      return `${href}&z="3"`;
    });
    assert.deepEqual(seen, ['https://a.example/?x=1&y=2"']);
    assert.equal(out, '<a href="https://a.example/?x=1&amp;y=2&quot;&amp;z=&quot;3&quot;">x</a>');
  });

  it('keeps every other byte: comments, scripts, textareas, odd markup', async () => {
    const html = [
      '<!DOCTYPE html><html><head><style>a[href="https://s.example"]{color:red}</style></head><body>',
      '<!-- <a href="https://commented.example">old</a> -->',
      '<script>var s = \'<a href="https://script.example">\';</script>',
      '<textarea><a href="https://textarea.example"></a></textarea>',
      '<title-ish data-x="<a href=https://attr.example>">',
      '<a  data-a = "1"   href = "https://x.example/é"  >spaced</a>',
      '<a clicktracking="off" href="https://opted-out.example">off</a>',
      '</body></html>',
    ].join('\n');
    const out = await rewriteLinks(html, mark);
    assert.equal(
      out,
      html.replace('href = "https://x.example/é"', 'href="https://t.example/?u=https://x.example/é"'),
    );
  });

  it('gives the rewriter the first href when an <a> repeats it (the one a browser uses)', async () => {
    const seen: string[] = [];
    await rewriteLinks('<a href="https://first.example" href="https://second.example">x</a>', (h) => {
      seen.push(h);
      return undefined;
    });
    assert.deepEqual(seen, ['https://first.example']);
  });

  it('does not wrap a link that already goes through the click endpoint', async () => {
    const base = 'https://mailroom.example';
    const tracking = createClickTracking({ secret: TEST_SECRET, publicBaseUrl: base });
    const once = await tracking.trackLinks(
      '<a href="https://a.example">a</a>',
      '0f8fad5b-d9cb-469f-a165-70867728950e',
    );
    assert.ok(once.includes(`${base}${CLICK_PATH}`));
    assert.equal(await tracking.trackLinks(once, '0f8fad5b-d9cb-469f-a165-70867728950e'), once);
  });

  it('tracks the first MAX_TRACKED_LINKS links of an email and leaves the rest as written', async () => {
    const base = 'https://mailroom.example';
    const tracking = createClickTracking({ secret: TEST_SECRET, publicBaseUrl: base });
    const links = Array.from(
      { length: MAX_TRACKED_LINKS + 5 },
      (_, i) => `<a href="https://x.example/${i}">${i}</a>`,
    );
    // mailto: links are not tracked and do not count.
    const html = `<a href="mailto:a@example.com">m</a>${links.join('')}`;
    const out = await tracking.trackLinks(html, '0f8fad5b-d9cb-469f-a165-70867728950e');
    assert.equal(out.split(`${base}${CLICK_PATH}`).length - 1, MAX_TRACKED_LINKS);
    assert.ok(out.startsWith('<a href="mailto:a@example.com">m</a>'));
    assert.ok(out.endsWith(links.slice(MAX_TRACKED_LINKS).join('')), 'the links past the bound as written');
    assert.ok(
      !out.includes(`"https://x.example/${MAX_TRACKED_LINKS - 1}"`),
      'the last tracked one rewritten',
    );
  });

  it('finds links and characters that straddle two slices', async () => {
    // A surrogate pair split by the first slice boundary, a link split by the second.
    const first = `<p>${'x'.repeat(SLICE - 4)}😀</p>`;
    const second = 'y'.repeat(2 * SLICE - first.length - 10);
    const html = `${first}${second}<p><a href="https://split.example/">😀</a></p>`;
    assert.ok(html.indexOf('href') < 2 * SLICE && html.indexOf('split.example') > 2 * SLICE);
    const out = await rewriteLinks(html, mark);
    assert.equal(
      out,
      html.replace('href="https://split.example/"', 'href="https://t.example/?u=https://split.example/"'),
    );
  });

  it('handles a large document with many links, tokenised in slices', async () => {
    const html = `<html><body>${'<p><a href="https://a.example/p?i=1">link</a> text &amp; more 😀 é</p>\n'.repeat(20_000)}</body></html>`;
    const out = await rewriteLinks(html, mark);
    assert.equal(out.split('https://t.example/?u=').length - 1, 20_000);
    assert.equal(out.replaceAll('https://t.example/?u=', ''), html);
  });
});
