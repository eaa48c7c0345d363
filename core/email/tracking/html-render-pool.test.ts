import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { renderEmail } from '../../../templates/engine.ts';
import { MailroomError } from '../../errors.ts';
import { createHtmlRenderPool } from './html-render-pool.ts';
import { findLinks } from './link-rewriter.ts';
import { unpackLinks } from './link-scan.ts';

const PIXEL = 'https://mailroom.test/api/email/track?view_key=k';
const nestedDivs = (depth: number) => `${'<div>'.repeat(depth)}deep${'</div>'.repeat(depth)}`;
/**
 * Deep enough to take several times the 1.5 s budget (parsing is quadratic in
 * the depth: 100,000 took 1.4–2.7 s of CPU, close enough to the budget that a
 * fast run rendered it; 200,000 about four times that).
 */
const TOO_DEEP = 200_000;
const tooComplex = (err: unknown) =>
  err instanceof MailroomError && err.kind === 'validation' && err.message === 'html_body is too complex.';

describe('HTML render threads', () => {
  const pool = createHtmlRenderPool({ threads: 1 });
  after(() => pool.close());

  it('render a caller’s HTML exactly as the template engine does, and find its links', async () => {
    const htmlBody =
      '<h1>Hi &amp; welcome</h1><p>Read <a href="https://example.com/a?x=1&amp;y=2">this</a>, ' +
      '<a clicktracking="off" href="https://example.com/untracked">not this</a>.</p><script>"<a href=x>"</script>';
    const rendered = await pool.render(
      { htmlBody, subject: 'S', trackingPixelUrl: PIXEL, findLinks: true },
      'company-a',
    );
    const expected = renderEmail({
      templateId: 'custom',
      data: {},
      subject: 'S',
      trackingPixelUrl: PIXEL,
      htmlBody,
    });
    assert.equal(rendered.html, expected.html);
    assert.equal(rendered.text, expected.text);
    assert.deepEqual([...unpackLinks(rendered.links!)], await findLinks(expected.html));
    const withoutLinks = await pool.render(
      {
        htmlBody,
        subject: 'S',
        trackingPixelUrl: undefined,
        findLinks: false,
      },
      'company-a',
    );
    assert.equal(withoutLinks.links, undefined);
    assert.ok(!withoutLinks.html.includes('view_key'));
  });

  it('200,000 nested <div> (quadratic to parse): refused as too complex, and the next message renders', async () => {
    await assert.rejects(
      pool.render(
        { htmlBody: nestedDivs(TOO_DEEP), subject: 's', trackingPixelUrl: PIXEL, findLinks: true },
        'company-a',
      ),
      tooComplex,
    );
    const next = await pool.render(
      {
        htmlBody: '<p>next</p>',
        subject: 's',
        trackingPixelUrl: PIXEL,
        findLinks: true,
      },
      'company-a',
    );
    assert.equal(next.text, 'next\n');
  });

  it('the budget is a thread’s time on one message: messages queued behind a refused one still render', async () => {
    const queued = [
      pool.render(
        {
          htmlBody: nestedDivs(TOO_DEEP),
          subject: 's',
          trackingPixelUrl: PIXEL,
          findLinks: false,
        },
        'company-a',
      ),
      ...Array.from({ length: 3 }, (_, i) =>
        pool.render(
          { htmlBody: `<p>${i}</p>`, subject: 's', trackingPixelUrl: PIXEL, findLinks: false },
          'company-a',
        ),
      ),
    ];
    const [complex, ...simple] = await Promise.allSettled(queued);
    assert.equal(complex!.status, 'rejected');
    assert.ok(tooComplex((complex as PromiseRejectedResult).reason));
    assert.deepEqual(
      simple.map((r) => (r.status === 'fulfilled' ? r.value.text : String(r.reason))),
      ['0\n', '1\n', '2\n'],
    );
  });

  it("one company's queue of slow messages does not hold another's back", async () => {
    const order: string[] = [];
    const slow = Array.from({ length: 4 }, (_, i) =>
      pool
        .render(
          { htmlBody: nestedDivs(TOO_DEEP), subject: 's', trackingPixelUrl: PIXEL, findLinks: false },
          'company-a',
        )
        .then(
          () => order.push(`a${i}`),
          () => order.push(`a${i}`),
        ),
    );
    const small = pool
      .render({ htmlBody: '<p>b</p>', subject: 's', trackingPixelUrl: PIXEL, findLinks: false }, 'company-b')
      .then((r) => order.push(`b ${r.text.trim()}`));
    await Promise.all([...slow, small]);
    // One thread: B waited for A's first (running) and at most its next, never all four.
    assert.ok(order.indexOf('b b') <= 2, order.join(', '));
  });
});
