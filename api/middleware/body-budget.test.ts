import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { SCOPES } from '../../core/identity.ts';
import { invoiceBody, useEmailApp } from '../../test/support/email-app.ts';
import { WEBHOOK_BODY_LIMIT } from '../routes/email/webhook.ts';
import {
  ANONYMOUS_BODIES_BUSY,
  ANONYMOUS_SHARE,
  BodyBudget,
  COMPANY_BODIES_BUSY,
  FREE_BODY_BYTES,
  GATEWAY_BODIES_BUSY,
  NETWORK_BODIES_BUSY,
} from './body-budget.ts';
import { bytesOf } from './json-body.ts';

const MB = 1024 * 1024;

describe('the room for request bodies (one gateway)', () => {
  it('a company gets half the room, the gateway all of it; small bodies pass a full gateway, not a full half; released room is free again', () => {
    const budget = new BodyBudget(90 * MB);
    const a = budget.companies.open('a');
    a.grow(40 * MB);
    const a2 = budget.companies.open('a');
    assert.throws(() => a2.grow(10 * MB), { message: COMPANY_BODIES_BUSY });
    assert.equal(budget.companies.held('a'), 40 * MB, 'a refused body takes nothing');
    const b = budget.companies.open('b');
    b.grow(45 * MB);
    const c = budget.companies.open('c');
    assert.throws(() => c.grow(10 * MB), { message: GATEWAY_BODIES_BUSY });
    // At most FREE_BODY_BYTES, a body is counted, and refused only when its company holds its half.
    const small = budget.companies.open('c');
    small.grow(FREE_BODY_BYTES);
    assert.equal(budget.companies.held(), 85 * MB + FREE_BODY_BYTES);
    assert.throws(() => budget.companies.open('b').grow(1024), { message: COMPANY_BODIES_BUSY });
    a.release();
    a.release();
    small.release();
    assert.equal(budget.companies.held(), 45 * MB, 'each body gives back what it held, once');
    c.grow(40 * MB);
    assert.equal(budget.companies.held('c'), 40 * MB);
  });

  it('many small bodies of one company fill its half only: another company’s large body still fits (audit: 130 trickling 1 MiB bodies blocked everyone)', () => {
    const budget = new BodyBudget(128 * MB);
    const held = [];
    let refused = 0;
    for (let i = 0; i < 130; i++) {
      try {
        const body = budget.companies.open('a');
        body.grow(FREE_BODY_BYTES);
        held.push(body);
      } catch {
        refused++;
      }
    }
    assert.deepEqual([held.length, refused], [64, 66]);
    budget.companies.open('b').grow(40 * MB);
    assert.equal(budget.companies.held(), 104 * MB);
  });

  it('callers without credentials share a room of their own, an eighth, small bodies counted and refused alike: from any number of networks they never take key holders’ room (audit: three networks took it all)', () => {
    const budget = new BodyBudget(128 * MB);
    assert.equal(budget.anonymous.total, 16 * MB);
    // One network: half of that room, then 429.
    budget.anonymous.open('198.51.100.7').grow(8 * MB);
    assert.throws(() => budget.anonymous.open('198.51.100.7').grow(1), { message: NETWORK_BODIES_BUSY });
    // Many networks, each a body announcing 1 MiB (no exemption for small bodies): the room fills, then 503.
    let held = 0;
    for (let i = 0; i < 100; i++) {
      try {
        budget.anonymous.open(`203.0.113.${i}`).grow(FREE_BODY_BYTES);
        held++;
      } catch (err) {
        assert.equal((err as Error).message, ANONYMOUS_BODIES_BUSY);
      }
    }
    assert.equal(held, 8);
    assert.throws(() => budget.anonymous.open('192.0.2.1').grow(1024), { message: ANONYMOUS_BODIES_BUSY });
    assert.equal(budget.anonymous.held(), 16 * MB);
    // Key holders' room is all there: two companies take a half each.
    budget.companies.open('a').grow(64 * MB);
    budget.companies.open('b').grow(64 * MB);
    assert.equal(budget.companies.held(), 128 * MB);
  });
});

/**
 * Over real HTTP with the smallest room (90 MiB: two 45 MB sends; a company
 * 45): large bodies that have not finished arriving hold their room, and the
 * next one that would not fit is answered at once, before its body is sent.
 */
describe('large request bodies in flight', () => {
  // Loopback is a trusted proxy: a request that says whom it forwards is counted as that client.
  const app = useEmailApp({
    env: { AUTH_MODE: 'api-key', BODY_BYTES_IN_FLIGHT_MB: '90', TRUSTED_PROXIES: 'loopback' },
  });
  const companies = [randomUUID(), randomUUID(), randomUUID()];
  const keys: string[] = [];
  before(async () => {
    for (const companyId of companies) {
      const key = await app.keys.create({ companyId, organizationId: null, name: 'big', scopes: SCOPES });
      keys.push(key.plaintext);
    }
  });
  const open: Socket[] = [];
  after(() => open.forEach((socket) => socket.destroy()));

  /**
   * A POST to `path` (with `key`, or none) whose head announces `length`
   * bytes (or is chunked), with `first` of its body sent.
   */
  const startPost = (
    path: string,
    key: string | undefined,
    length: number | 'chunked',
    first: string,
    forwardedFor?: string,
  ) => {
    const url = new URL(app.url);
    const socket = connect(Number(url.port), url.hostname);
    open.push(socket);
    let answer = '';
    const answered = new Promise<string>((resolve, reject) => {
      socket.on('data', (chunk) => {
        answer += chunk.toString();
        if (/\r\n\r\n\{.*\}$/s.test(answer)) resolve(answer);
      });
      socket.on('error', reject);
      socket.on('close', () => resolve(answer));
    });
    const head = [
      `POST ${path} HTTP/1.1`,
      `Host: ${url.host}`,
      'Content-Type: application/json',
      ...(key ? [`Authorization: Bearer ${key}`] : []),
      ...(forwardedFor ? [`X-Forwarded-For: ${forwardedFor}`] : []),
      length === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${length}`,
      '',
      '',
    ].join('\r\n');
    const chunk = (text: string) =>
      length === 'chunked' ? `${text.length.toString(16)}\r\n${text}\r\n` : text;
    socket.write(head + chunk(first));
    return { socket, answered, send: (text: string) => socket.write(chunk(text)) };
  };
  /** A send whose head announces `length` bytes (or is chunked), with `first` of its body sent. */
  const startSend = (key: string, length: number | 'chunked', first = '{"to":"') =>
    startPost('/api/email/send', key, length, first);
  /** `started`'s answer within half a second, or `reading` when the gateway took its head and waits for its body. */
  const answerSoon = (started: { answered: Promise<string> }) =>
    Promise.race([
      started.answered,
      new Promise<string>((resolve) => setTimeout(() => resolve('reading'), 500)),
    ]);
  const sendSmall = (index: number) =>
    fetch(`${app.url}/api/email/send`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${keys[index]}`,
        'x-company-id': companies[index]!,
        'x-organization-id': randomUUID(),
        'x-user-id': randomUUID(),
      },
      body: JSON.stringify(invoiceBody()),
    });
  /**
   * The answer to a send announcing `length` bytes within half a second, or
   * `reading` when the gateway took its head and waits for its body; tried
   * again until `want` says so (the held bodies' heads are read meanwhile).
   */
  const answerOf = async (key: string, length: number, want: (answer: string) => boolean) => {
    let answer = '';
    for (let i = 0; i < 20; i++) {
      const send = startSend(key, length);
      answer = await answerSoon(send);
      send.socket.destroy();
      if (want(answer)) break;
    }
    return answer;
  };
  const refusedWith = (status: number, error: string) => (answer: string) =>
    answer.startsWith(`HTTP/1.1 ${status} `) &&
    /\r\nretry-after: 2\r\n/i.test(answer) &&
    answer.endsWith(JSON.stringify({ success: false, error }));

  it('past its company’s half → 429, past the gateway’s room → 503, both with Retry-After and before the body is sent; other companies and small sends go on', async () => {
    const [a, b, c] = keys as [string, string, string];
    const heldA = startSend(a, 40 * MB);
    const heldB = startSend(b, 45 * MB);
    // A second body of A's does not fit A's half.
    const second = await answerOf(a, 10 * MB, refusedWith(429, COMPANY_BODIES_BUSY));
    assert.ok(refusedWith(429, COMPANY_BODIES_BUSY)(second), second);
    // C has its whole half, but the gateway holds 85 of its 90 MiB.
    const third = await answerOf(c, 10 * MB, refusedWith(503, GATEWAY_BODIES_BUSY));
    assert.ok(refusedWith(503, GATEWAY_BODIES_BUSY)(third), third);

    // A body of at most 1 MiB is never refused for room, A's included.
    for (const index of [0, 2]) assert.equal((await sendSmall(index)).status, 200);

    // Clients that go away give their room back: C's 40 MB is taken and read.
    heldA.socket.destroy();
    heldB.socket.destroy();
    const later = await answerOf(c, 40 * MB, (answer) => answer === 'reading');
    assert.equal(later, 'reading', `40 MB of C after A and B left: ${later}`);
  });

  it('bodies without credentials (webhook posts announcing its limit, trickling) hold their own room, a network half of it: key holders’ 40 and 45 MB sends are both still read (audit: they took the whole room)', async () => {
    const limit = bytesOf(WEBHOOK_BODY_LIMIT);
    const anonymous: Array<ReturnType<typeof startPost>> = [];
    let refusal = '';
    while (!refusal && anonymous.length < 60) {
      const post = startPost('/api/email/webhooks/sendgrid', undefined, limit, '[');
      const answer = await answerSoon(post);
      if (answer === 'reading') anonymous.push(post);
      else refusal = answer;
    }
    // This client's network (loopback) holds half of the room callers without credentials share.
    assert.ok(refusedWith(429, NETWORK_BODIES_BUSY)(refusal), refusal);
    const networkHalf = Math.floor((90 * MB * ANONYMOUS_SHARE) / 2);
    assert.equal(anonymous.length, Math.floor(networkHalf / limit));

    // Key holders' room is untouched: A's 40 MB and B's 45 MB are held at once.
    const [a, b] = keys as [string, string];
    const heldA = startSend(a, 40 * MB);
    assert.equal(await answerSoon(heldA), 'reading', 'A’s 40 MB');
    const ofB = await answerOf(b, 45 * MB, (answer) => answer === 'reading');
    assert.equal(ofB, 'reading', `B's 45 MB with A's 40 and ${anonymous.length} webhook bodies held: ${ofB}`);
    heldA.socket.destroy();
    for (const post of anonymous) post.socket.destroy();
  });

  it('behind a trusted proxy, public routes count each forwarded client’s network apart: one network’s full half leaves another’s free', async () => {
    const limit = bytesOf(WEBHOOK_BODY_LIMIT);
    const held: Array<ReturnType<typeof startPost>> = [];
    let refusal = '';
    while (!refusal && held.length < 60) {
      const post = startPost('/api/email/webhooks/sendgrid', undefined, limit, '[', '203.0.113.7');
      const answer = await answerSoon(post);
      if (answer === 'reading') held.push(post);
      else refusal = answer;
    }
    assert.ok(refusedWith(429, NETWORK_BODIES_BUSY)(refusal), refusal);
    // Another client the proxy forwards, on another network, still has its half.
    const other = startPost('/api/email/webhooks/sendgrid', undefined, limit, '[', '198.51.100.9');
    assert.equal(await answerSoon(other), 'reading');
    other.socket.destroy();
    for (const post of held) post.socket.destroy();
  });

  it('a chunked body (no length announced) is counted as it arrives and refused where it crosses the line', async () => {
    const [a] = keys as [string];
    const held = startSend(a, 40 * MB);
    const chunked = startSend(a, 'chunked', '{"pad":"');
    const mb = 'x'.repeat(MB);
    let answer = '';
    void chunked.answered.then((text) => (answer = text));
    for (let sent = 0; sent < 20 && !answer; sent++) {
      chunked.send(mb);
      await new Promise((r) => setTimeout(r, 20));
    }
    answer = await Promise.race([
      chunked.answered,
      new Promise<string>((resolve) => setTimeout(() => resolve('no answer after 20 MB'), 5000)),
    ]);
    assert.match(answer, /^HTTP\/1\.1 429 /, answer.slice(0, 200));
    assert.ok(answer.endsWith(JSON.stringify({ success: false, error: COMPANY_BODIES_BUSY })));
    held.socket.destroy();
  });
});
