import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { clickTokens } from '../../core/email/tracking/click-token.ts';
import { startEmailApp, type EmailTestApp } from '../../test/support/email-app.ts';
import { TEST_SECRET } from '../../test/support/env.ts';
import { Scrape } from '../../test/support/metrics.ts';

/**
 * The tracking routes are answered in the HTTP request listener, before Koa
 * (tracking-fast-path.ts), for their exact spellings, and by the router for
 * the rest (a trailing slash): a caller gets the same answer either way,
 * with an X-Request-Id, and every request is counted in the HTTP metrics
 * under the route's template. Everything else reaches Koa untouched.
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

  it('a click: the same redirect body for HTML and plain-text callers, the same for HEAD', async () => {
    const token = clickTokens(TEST_SECRET).sign(randomUUID(), "https://acme.example/a?b=1&c='2'")!;
    const html = await bothWays(`/api/email/click/${token}`, '', { headers: { accept: 'text/html' } });
    assert.equal(html.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(
      Buffer.from(html.body, 'hex').toString(),
      'Redirecting to https://acme.example/a?b=1&amp;c=%272%27.',
    );
    const plain = await bothWays(`/api/email/click/${token}`, '', {
      headers: { accept: 'application/json' },
    });
    assert.equal(plain.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(
      Buffer.from(plain.body, 'hex').toString(),
      'Redirecting to https://acme.example/a?b=1&c=%272%27.',
    );
    const head = await bothWays(`/api/email/click/${token}`, '', { method: 'HEAD' });
    assert.equal(head.status, 302);
    assert.equal(head.body, '');
    const noToken = await answer('/api/email/click/');
    assert.equal(noToken.status, 404, 'an empty token is no route: Koa answers it');
    await app.email.flushOpens();
  });

  it('other paths and methods reach Koa: its 404, 405 and the POST route', async () => {
    // Another case is the router's to match (it ignores case): the same GIF, from Koa.
    const otherCase = await answer('/api/email/Track');
    assert.equal(otherCase.status, 200);
    assert.equal(otherCase.headers['content-type'], 'image/gif');
    for (const path of ['/api/email/trackx', '/api/email/click', '/api/email/track/x']) {
      const res = await answer(path);
      assert.equal(res.status, 404, path);
      assert.equal(Buffer.from(res.body, 'hex').toString(), '{"success":false,"error":"not found"}');
      assert.match(res.requestId ?? '', /^[0-9a-f-]{36}$/);
    }
    const put = await answer('/api/email/track', { method: 'PUT' });
    assert.equal(put.status, 405);
    const event = await answer('/api/email/track', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ view_key: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', event_type: 'opened' }),
    });
    assert.equal(event.status, 404, 'the POST route looked the key up');
    assert.equal(Buffer.from(event.body, 'hex').toString(), '{"success":false,"error":"email not found."}');
  });

  it('a failure while answering is a 500 in the error shape, not a dropped connection', async () => {
    const recordOpen = app.email.recordOpen;
    app.email.recordOpen = () => Promise.reject(new Error('boom'));
    try {
      const failed = await bothWays('/api/email/track', '?view_key=x');
      assert.equal(failed.status, 500);
      assert.equal(failed.headers['content-type'], 'application/json; charset=utf-8');
      assert.equal(Buffer.from(failed.body, 'hex').toString(), '{"success":false,"error":"internal error"}');
    } finally {
      app.email.recordOpen = recordOpen;
    }
  });

  it("echoes the caller's X-Request-Id", async () => {
    const res = await fetch(`${app.url}/api/email/track`, { headers: { 'x-request-id': 'caller-id.1' } });
    await res.arrayBuffer();
    assert.equal(res.headers.get('x-request-id'), 'caller-id.1');
  });

  it('answers many requests arriving at once, each with its own redirect and request id', async () => {
    // Answers of one turn of the event loop are written together (answers-per-turn.ts).
    const tokens = clickTokens(TEST_SECRET);
    const clicks = Array.from({ length: 60 }, (_, i) => {
      const url = `https://acme.example/page/${i}`;
      return { url, id: `click-${i}`, token: tokens.sign(randomUUID(), url)! };
    });
    const answers = await Promise.all(
      clicks.map(async ({ token, id }) => {
        const res = await fetch(`${app.url}/api/email/click/${token}`, {
          redirect: 'manual',
          headers: { 'x-request-id': id },
        });
        await res.arrayBuffer();
        return res;
      }),
    );
    answers.forEach((res, i) => {
      assert.equal(res.status, 302);
      assert.equal(res.headers.get('location'), clicks[i]!.url);
      assert.equal(res.headers.get('x-request-id'), clicks[i]!.id);
    });
    await app.email.flushOpens();
  });

  it('answers pipelined requests on one connection in the order they came', async () => {
    const tokens = clickTokens(TEST_SECRET);
    const urls = ['https://acme.example/first', 'https://acme.example/second'];
    const { hostname, port } = new URL(app.url);
    const requests = urls
      .map(
        (url, i) =>
          `GET /api/email/click/${tokens.sign(randomUUID(), url)!} HTTP/1.1\r\n` +
          `Host: ${hostname}\r\nX-Request-Id: pipelined-${i}\r\n` +
          (i === urls.length - 1 ? 'Connection: close\r\n' : '') +
          '\r\n',
      )
      .join('');
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => socket.end(requests));
      let received = '';
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => (received += chunk));
      socket.on('end', () => resolve(received));
      socket.on('error', reject);
    });
    const answers = raw.split('HTTP/1.1 ').slice(1);
    assert.equal(answers.length, 2, raw);
    answers.forEach((answer, i) => {
      assert.match(answer, /^302 /);
      assert.ok(answer.includes(`\r\nLocation: ${urls[i]}\r\n`), answer);
      assert.ok(answer.includes(`\r\nX-Request-Id: pipelined-${i}\r\n`), answer);
    });
    await app.email.flushOpens();
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
