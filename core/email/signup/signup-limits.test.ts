import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { useEmailApp, welcomeBody } from '../../../test/support/email-app.ts';

/**
 * The rate limits of unauthenticated signup sends, over HTTP against a real
 * gateway (AUTH_MODE=api-key) and the real counters in MongoDB: per recipient
 * mailbox and per client network, each however the caller spells it.
 */

const anonymous = {};

describe('unauthenticated signup sends: per recipient mailbox', () => {
  const app = useEmailApp({
    env: {
      AUTH_MODE: 'api-key',
      SIGNUP_LINK_ORIGINS: 'https://app.example',
      SIGNUP_LIMIT_PER_RECIPIENT: '3',
      SIGNUP_LIMIT_PER_IP: '1000',
    },
  });
  const unique = () => `signup-${randomUUID()}@example.com`;

  it('limits sends per recipient: 429 with Retry-After once the hourly count is spent', async () => {
    const to = unique();
    for (let i = 0; i < 3; i++) {
      const res = await app.post('/api/email/send', welcomeBody({ to }), anonymous);
      assert.equal(res.status, 200, `send ${i + 1}`);
    }
    const limited = await app.post('/api/email/send', welcomeBody({ to: to.toUpperCase() }), anonymous);
    assert.equal(limited.status, 429);
    assert.deepEqual(limited.body, { success: false, error: 'too many emails. try again later.' });
    const retryAfter = Number(limited.headers.get('retry-after'));
    assert.ok(retryAfter > 0 && retryAfter <= 3600, `Retry-After ${retryAfter}`);
    assert.equal(app.fake.accepted.length, 3);
    // Another address is not affected.
    assert.equal((await app.post('/api/email/send', welcomeBody({ to: unique() }), anonymous)).status, 200);
  });

  it('counts concurrent sends exactly: 10 at once to one address send 3', async () => {
    const to = unique();
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => app.post('/api/email/send', welcomeBody({ to }), anonymous)),
    );
    assert.equal(answers.filter((a) => a.status === 200).length, 3);
    assert.equal(answers.filter((a) => a.status === 429).length, 7);
  });

  it('the attack of issue 20: case, +tags and Gmail dots are one mailbox, not fresh budgets', async () => {
    const user = `victim${randomBytes(4).toString('hex').replace(/\d/g, 'x')}`;
    for (let i = 0; i < 3; i++)
      assert.equal(
        (await app.post('/api/email/send', welcomeBody({ to: `${user}@gmail.com` }), anonymous)).status,
        200,
      );
    const spellings = [
      `${user[0]!.toUpperCase()}${user.slice(1)}@gmail.com`,
      `${user}+1@gmail.com`,
      `${user[0]}.${user.slice(1)}@gmail.com`,
      `${user.slice(0, 3)}.${user.slice(3)}+signup@GMAIL.com`,
      `${user}@googlemail.com`,
    ];
    for (const to of spellings) {
      const res = await app.post('/api/email/send', welcomeBody({ to }), anonymous);
      assert.equal(res.status, 429, to);
    }
    assert.equal(app.fake.accepted.length, 3);
    // Dots count only where the provider ignores them.
    const elsewhere = `${user}@example.com`;
    for (let i = 0; i < 3; i++)
      assert.equal(
        (await app.post('/api/email/send', welcomeBody({ to: elsewhere }), anonymous)).status,
        200,
      );
    const dotted = `${user[0]}.${user.slice(1)}@example.com`;
    assert.equal((await app.post('/api/email/send', welcomeBody({ to: dotted }), anonymous)).status, 200);
  });
});

describe('unauthenticated signup sends: per client IP', () => {
  const app = useEmailApp({
    env: {
      AUTH_MODE: 'api-key',
      SIGNUP_LINK_ORIGINS: 'https://app.example',
      SIGNUP_LIMIT_PER_IP: '2',
      TRUSTED_PROXIES: '',
    },
  });
  const unique = () => `ip-${randomUUID()}@example.com`;

  it('limits per client address; X-Forwarded-For from an untrusted peer changes nothing', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await app.post('/api/email/send', welcomeBody({ to: unique() }), {
        'x-forwarded-for': `203.0.113.${i}`,
      });
      assert.equal(res.status, 200);
    }
    const limited = await app.post('/api/email/send', welcomeBody({ to: unique() }), {
      'x-forwarded-for': '198.51.100.7',
    });
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.headers.get('retry-after')) <= 60);
  });
});

describe('unauthenticated signup sends behind a trusted proxy', () => {
  const app = useEmailApp({
    env: {
      AUTH_MODE: 'api-key',
      SIGNUP_LINK_ORIGINS: 'https://app.example',
      SIGNUP_LIMIT_PER_IP: '1',
      TRUSTED_PROXIES: 'loopback',
    },
  });
  const unique = () => `proxy-${randomUUID()}@example.com`;
  const from = (ip: string) =>
    app.post('/api/email/send', welcomeBody({ to: unique() }), { 'x-forwarded-for': ip });

  it('takes the client address from X-Forwarded-For when the peer is a trusted proxy', async () => {
    assert.equal((await from('203.0.113.10')).status, 200);
    assert.equal((await from('203.0.113.10')).status, 429);
    assert.equal((await from('203.0.113.11')).status, 200);
  });

  it('the attack of issue 20: one client is one network, however its address is written', async () => {
    // An IPv4-mapped IPv6 address is its IPv4 address.
    assert.equal((await from('::ffff:203.0.113.20')).status, 200);
    assert.equal((await from('203.0.113.20')).status, 429);
    // Loopback is one host: ::1 and ::ffff:127.0.0.1 (and 127.0.0.2).
    assert.equal((await from('::1')).status, 200);
    assert.equal((await from('::ffff:127.0.0.1')).status, 429);
    assert.equal((await from('127.0.0.2')).status, 429);
    // IPv6 by /64: another interface id of the same network shares the budget; another /64 does not.
    assert.equal((await from('2001:db8:20:1::1')).status, 200);
    assert.equal((await from('2001:db8:20:1:ffff:ffff:ffff:fffe')).status, 429);
    assert.equal((await from('2001:DB8:20:1:0:0:0:2')).status, 429);
    assert.equal((await from('2001:db8:20:2::1')).status, 200);
  });
});
