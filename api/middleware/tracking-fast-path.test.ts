import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { clickTokens } from '../../core/email/tracking/click-token.ts';
import { startEmailApp, type EmailTestApp } from '../../test/support/email-app.ts';
import { TEST_SECRET } from '../../test/support/env.ts';
import { Scrape } from '../../test/support/metrics.ts';

/**
 * The tracking routes are answered by a fast path ahead of the general
 * middleware (tracking-fast-path.ts) for their exact spellings, and by the
 * router for the rest (a trailing slash): a caller gets the same answer
 * either way, with an X-Request-Id, and every request is counted in the HTTP
 * metrics under the route's template.
 */
describe('tracking routes: fast path and general chain alike', () => {
  let app: EmailTestApp;
  before(async () => {
    app = await startEmailApp({ env: { AUTH_MODE: 'trusted-headers' } });
  });
  after(() => app.close());

  /** Everything a caller sees of an answer, but its X-Request-Id. */
  async function answer(path: string, init: RequestInit = {}) {
    const res = await fetch(`${app.url}${path}`, { redirect: 'manual', ...init });
    const body = Buffer.from(await res.arrayBuffer()).toString('hex');
    const headers = Object.fromEntries(
      [...res.headers].filter(
        ([name]) => !['date', 'x-request-id', 'connection', 'keep-alive'].includes(name),
      ),
    );
    return { status: res.status, headers, body, requestId: res.headers.get('x-request-id') };
  }

  /** The same request by the fast path (exact path) and by the router (a trailing slash). */
  async function bothWays(path: string, query = '', init: RequestInit = {}) {
    const fast = await answer(`${path}${query}`, init);
    const routed = await answer(`${path}/${query}`, init);
    assert.deepEqual(fast.headers, routed.headers, path);
    assert.equal(fast.body, routed.body, path);
    assert.equal(fast.status, routed.status, path);
    for (const { requestId } of [fast, routed]) assert.match(requestId ?? '', /^[0-9a-f-]{36}$/);
    return fast;
  }

  it('the pixel: the same GIF and headers, for GET and HEAD', async () => {
    const gif = await bothWays('/api/email/track', '?view_key=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    assert.equal(gif.status, 200);
    assert.equal(gif.headers['content-type'], 'image/gif');
    assert.equal(gif.headers['content-length'], '43');
    const head = await bothWays('/api/email/track', '', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.headers['content-type'], 'image/gif');
    assert.equal(head.body, '');
  });

  it('a click: the same 302 for a good token, the same 400 for a bad one', async () => {
    const token = clickTokens(TEST_SECRET).sign(randomUUID(), 'https://acme.example/a?b=1')!;
    const followed = await bothWays(`/api/email/click/${token}`);
    assert.equal(followed.status, 302);
    assert.equal(followed.headers['location'], 'https://acme.example/a?b=1');
    const refused = await bothWays(`/api/email/click/${token}x`);
    assert.equal(refused.status, 400);
    assert.equal(
      Buffer.from(refused.body, 'hex').toString(),
      '{"success":false,"error":"invalid click link."}',
    );
    const undecodable = await bothWays('/api/email/click/%E0%A4%A');
    assert.equal(undecodable.status, 400);
    await app.email.flushOpens();
  });

  it("echoes the caller's X-Request-Id", async () => {
    const res = await fetch(`${app.url}/api/email/track`, { headers: { 'x-request-id': 'caller-id.1' } });
    await res.arrayBuffer();
    assert.equal(res.headers.get('x-request-id'), 'caller-id.1');
  });

  it('counts each request in the HTTP metrics under the route template', async () => {
    const before = await Scrape.of(`${app.url}/metrics`);
    const token = clickTokens(TEST_SECRET).sign(randomUUID(), 'https://acme.example/')!;
    for (const path of [
      '/api/email/track?view_key=x',
      '/api/email/track',
      `/api/email/click/${token}`,
      '/api/email/click/not-a-token',
    ])
      await (await fetch(`${app.url}${path}`, { redirect: 'manual' })).arrayBuffer();
    await (await fetch(`${app.url}/api/email/track`, { method: 'HEAD' })).arrayBuffer();
    const now = await Scrape.of(`${app.url}/metrics`);
    const delta = (name: string, labels: Record<string, string>) =>
      now.value(name, labels) - before.value(name, labels);
    const requests = (method: string, route: string, status: string) =>
      delta('mailroom_http_requests_total', { method, route, status });
    assert.equal(requests('GET', '/api/email/track', '200'), 2);
    assert.equal(requests('HEAD', '/api/email/track', '200'), 1);
    assert.equal(requests('GET', '/api/email/click/:token', '302'), 1);
    assert.equal(requests('GET', '/api/email/click/:token', '400'), 1);
    assert.equal(
      delta('mailroom_http_request_duration_seconds_count', { route: '/api/email/track' }),
      3,
      'timed too',
    );
    await app.email.flushOpens();
  });
});
