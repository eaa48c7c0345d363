import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { clickTokens } from '../../../core/email/tracking/click-token.ts';
import { statusOf, type EmailRecord } from '../../../core/email/records/record.ts';
import { invoiceBody, useEmailApp } from '../../../test/support/email-app.ts';
import { firstFormatToken } from '../../../test/support/click-tokens.ts';
import { TEST_SECRET } from '../../../test/support/env.ts';

/** Where every tracked link's token is: `{PUBLIC_BASE_URL}/api/email/click/{token}`. */
const CLICK_LINK = /http:\/\/mailroom\.test\/api\/email\/click\/([\w.-]+)/g;
const INVALID = { success: false, error: 'invalid click link.' };

describe('click tracking (GET /api/email/click/{token})', () => {
  const app = useEmailApp();

  /** A landing page on a local server: what a followed redirect reaches. */
  let landing: Server;
  let landingUrl = '';
  const landed: string[] = [];
  before(async () => {
    landing = createServer((req, res) => {
      landed.push(req.url ?? '');
      res.setHeader('content-type', 'text/plain');
      res.end('landed');
    });
    await new Promise<void>((resolve) => landing.listen(0, '127.0.0.1', resolve));
    landingUrl = `http://127.0.0.1:${(landing.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => landing.close(() => resolve())));

  /** Sends one email; the HTML and text parts SendGrid received, and the click tokens in the HTML. */
  async function send(body: Record<string, unknown>) {
    const before = app.fake.accepted.length;
    const res = await app.post('/api/email/send', body);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const content = app.fake.accepted[before]!.body.content;
    const html = content.find((c) => c.type === 'text/html')!.value;
    const text = content.find((c) => c.type === 'text/plain')!.value;
    const tokens = [...html.matchAll(CLICK_LINK)].map((m) => m[1]!);
    return { emailId: String(res.body['email_id']), html, text, tokens };
  }

  const customBody = (html: string, extra: Record<string, unknown> = {}) => ({
    to: 'reader@example.com',
    subject: 'Links',
    template_id: 'custom',
    html_body: html,
    ...extra,
  });

  /** One click: no credentials (the route has none), redirects not followed. */
  const click = (token: string) => fetch(`${app.url}/api/email/click/${token}`, { redirect: 'manual' });

  const stored = async (emailId: string) => {
    const doc = await app.database.db.collection<EmailRecord>('emails').findOne({ _id: emailId });
    assert.ok(doc, 'the record exists');
    return { ...doc, status: statusOf(doc) };
  };

  it('rewrites the template button; the click redirects (302) to the original and records click + open', async () => {
    const { emailId, html, text, tokens } = await send(invoiceBody());
    const original = 'https://acme.example/invoices/1';
    assert.ok(tokens.length >= 1, 'the invoice button is tracked');
    // The one untracked href is the fallback line's, whose text is that very URL.
    const untracked = [...html.matchAll(/<a href="https:\/\/acme\.example\/invoices\/1"[^>]*>([^<]*)</g)];
    assert.deepEqual(
      untracked.map((m) => m[1]),
      [original],
      'only the fallback line links untracked, to what it shows',
    );
    assert.match(text, /https:\/\/acme\.example\/invoices\/1/, 'the text part keeps the original URL');
    assert.doesNotMatch(text, /api\/email\/click/);
    assert.match(html, /api\/email\/track\?view_key=/, 'the pixel stays');

    const before = await stored(emailId);
    assert.equal(before.clicked, false);
    assert.equal(before.opened, false);

    const res = await click(tokens[0]!);
    assert.equal(res.status, 302);
    assert.equal(res.headers.get('location'), original);
    assert.equal(res.headers.get('cache-control'), 'no-store');

    await app.email.flushOpens();
    const status = (await app.get(`/api/email/status/${emailId}`)).body['data'] as Record<string, unknown>;
    assert.equal(status['opened'], true, 'a click counts as an open');
    assert.equal(status['status'], 'opened');
    const after = await stored(emailId);
    assert.equal(after.clicked, true);
    assert.ok(after.opened_at instanceof Date);
  });

  it('a HEAD (a link checker) gets the same redirect and records no click', async () => {
    const { emailId, tokens } = await send(invoiceBody());
    const res = await fetch(`${app.url}/api/email/click/${tokens[0]!}`, {
      method: 'HEAD',
      redirect: 'manual',
    });
    assert.equal(res.status, 302);
    assert.equal(res.headers.get('location'), 'https://acme.example/invoices/1');
    await app.email.flushOpens();
    const after = await stored(emailId);
    assert.equal(after.clicked, false);
    assert.equal(after.opened, false);
  });

  it('a followed redirect lands on the original page, query and fragment kept', async () => {
    const target = `${landingUrl}/landing/page?campaign=spring&x=1%202`;
    const { emailId, html, tokens } = await send(
      customBody(`<p>Read <a href="${target.replace(/&/g, '&amp;')}#section">the page</a>.</p>`),
    );
    assert.equal(tokens.length, 1, html);

    const manual = await click(tokens[0]!);
    assert.equal(manual.status, 302);
    assert.equal(manual.headers.get('location'), `${target}#section`);

    landed.length = 0;
    const followed = await fetch(`${app.url}/api/email/click/${tokens[0]!}`);
    assert.equal(followed.status, 200);
    assert.equal(await followed.text(), 'landed');
    assert.equal(followed.url, `${target}`, 'fetch drops the fragment from the final URL');
    assert.deepEqual(landed, ['/landing/page?campaign=spring&x=1%202']);

    await app.email.flushOpens();
    assert.equal((await stored(emailId)).clicked, true);
  });

  it('rewrites only absolute http(s) links of custom HTML; the rest of it is unchanged', async () => {
    const body = [
      '<p><a href="https://a.example/one">one</a>',
      '<a href="http://b.example/two?x=1&amp;y=2" style="color:red">two</a>',
      '<a href="mailto:help@example.com">mail</a> <a href="tel:+1555">call</a>',
      '<a href="#top">top</a> <a href="/relative">rel</a></p>',
    ].join('\n');
    const { html, tokens } = await send(customBody(body));
    assert.equal(tokens.length, 2);
    const verify = clickTokens(TEST_SECRET).verify;
    assert.deepEqual(
      tokens.map((t) => verify(t)?.url),
      ['https://a.example/one', 'http://b.example/two?x=1&y=2'],
    );
    // Put the originals back: what is left is exactly the caller's HTML.
    const restored = html
      .replace(`http://mailroom.test/api/email/click/${tokens[0]!}`, 'https://a.example/one')
      .replace(`http://mailroom.test/api/email/click/${tokens[1]!}`, 'http://b.example/two?x=1&amp;y=2');
    assert.ok(restored.includes(body), restored);
  });

  it('answers 400 without a Location for tampered, truncated, foreign-secret and malformed tokens, and records nothing', async () => {
    const { emailId, tokens } = await send(invoiceBody());
    const token = tokens[0]!;
    const [payload, mac] = token.split('.') as [string, string];
    const swap = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    const foreign = clickTokens('a-different-secret-of-32-characters-or-more').sign(
      emailId,
      'https://evil.example/phish',
    )!;
    const bad = {
      'tampered payload': `${swap(payload, 30)}.${mac}`,
      'tampered mac': `${payload}.${swap(mac, 3)}`,
      'truncated mac': token.slice(0, -1),
      'payload only': payload,
      'truncated payload': `${payload.slice(0, 20)}.${mac}`,
      'foreign secret': foreign,
      'other URL, our mac': `${foreign.split('.')[0]!}.${mac}`,
      garbage: 'not-a-token',
      'percent-encoded junk': '%E0%A4%A',
      'too long': `${payload}${'A'.repeat(5000)}.${mac}`,
    };
    for (const [name, value] of Object.entries(bad)) {
      const res = await click(value);
      assert.equal(res.status, 400, name);
      assert.equal(res.headers.get('location'), null, name);
      assert.deepEqual(await res.json(), INVALID, name);
    }
    await app.email.flushOpens();
    const after = await stored(emailId);
    assert.equal(after.clicked, false);
    assert.equal(after.opened, false);
  });

  it("a valid token whose email record is gone still redirects (the signature proves it's ours)", async () => {
    const token = clickTokens(TEST_SECRET).sign(randomUUID(), 'https://gone.example/page')!;
    const res = await click(token);
    assert.equal(res.status, 302);
    assert.equal(res.headers.get('location'), 'https://gone.example/page');
    await app.email.flushOpens();
  });

  it('expires: a link older than CLICK_LINK_LIFETIME_DAYS (365) answers 400 without a Location and records nothing', async () => {
    const { emailId } = await send(invoiceBody());
    const day = 86_400_000;
    const signedDaysAgo = (days: number) =>
      clickTokens(TEST_SECRET, { now: () => Date.now() - days * day }).sign(
        emailId,
        'https://acme.example/old',
      )!;
    const fresh = await click(signedDaysAgo(364));
    assert.equal(fresh.status, 302);
    assert.equal(fresh.headers.get('location'), 'https://acme.example/old');
    const expired = await click(signedDaysAgo(366));
    assert.equal(expired.status, 400);
    assert.equal(expired.headers.get('location'), null);
    assert.deepEqual(await expired.json(), { success: false, error: 'click link expired.' });
    await app.email.flushOpens();
    assert.equal((await stored(emailId)).clicked, true, 'the fresh click only');
  });

  it('a token of the unreleased first format (no expiry) is an invalid link, even correctly signed', async () => {
    const { emailId } = await send(invoiceBody());
    const res = await click(firstFormatToken(TEST_SECRET, emailId, 'https://acme.example/legacy'));
    assert.equal(res.status, 400);
    assert.equal(res.headers.get('location'), null);
    assert.deepEqual(await res.json(), { success: false, error: 'invalid click link.' });
  });

  it('track_clicks: false leaves the links as they were; the pixel stays', async () => {
    const { html, tokens } = await send(invoiceBody({ track_clicks: false }));
    assert.deepEqual(tokens, []);
    assert.match(html, /href="https:\/\/acme\.example\/invoices\/1"/);
    assert.match(html, /api\/email\/track\?view_key=/);
  });

  it('track_opens: false leaves the pixel out; links are still tracked', async () => {
    const template = await send(invoiceBody({ track_opens: false }));
    assert.doesNotMatch(template.html, /api\/email\/track/);
    assert.ok(template.tokens.length >= 1);

    const custom = await send(
      customBody('<html><body><a href="https://a.example">a</a></body></html>', { track_opens: false }),
    );
    assert.doesNotMatch(custom.html, /api\/email\/track|<img/);
    assert.equal(custom.tokens.length, 1);

    const neither = await send(
      customBody('<p><a href="https://a.example">a</a></p>', { track_opens: false, track_clicks: false }),
    );
    assert.doesNotMatch(neither.html, /api\/email\/(track|click)/);
    assert.match(neither.html, /<a href="https:\/\/a\.example">a<\/a>/);
  });

  it('refuses a non-boolean track_clicks / track_opens (400)', async () => {
    for (const field of ['track_clicks', 'track_opens']) {
      const res = await app.post('/api/email/send', invoiceBody({ [field]: 'no' }));
      assert.equal(res.status, 400, field);
      assert.equal(res.body['success'], false);
    }
  });

  it('bulk items opt out one by one', async () => {
    const before = app.fake.accepted.length;
    const res = await app.post('/api/email/bulk', {
      emails: [invoiceBody(), invoiceBody({ track_clicks: false })],
      batchDelay: 0,
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const htmls = app.fake.accepted
      .slice(before)
      .map((m) => m.body.content.find((c) => c.type === 'text/html')!.value);
    assert.equal(htmls.length, 2);
    assert.equal(htmls.filter((h) => /api\/email\/click\//.test(h)).length, 1);
  });
});
