import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { useEmailApp, welcomeBody } from '../../test/support/email-app.ts';

/**
 * Unauthenticated sends of the signup templates (password-reset, welcome,
 * verification), over HTTP against a real gateway in AUTH_MODE=api-key:
 * narrowed to what a signup flow needs and rate-limited, so the gateway is
 * no anonymous relay. A key lifts every narrowing.
 */
describe('unauthenticated signup sends', () => {
  const app = useEmailApp({
    env: {
      AUTH_MODE: 'api-key',
      SIGNUP_LINK_ORIGINS: 'https://app.example',
      SIGNUP_LIMIT_PER_RECIPIENT: '3',
      SIGNUP_LIMIT_PER_IP: '1000',
    },
  });
  const anonymous = {};
  const unique = () => `signup-${randomUUID()}@example.com`;

  it('sends one welcome email to one recipient with links on the allowed origin', async () => {
    const res = await app.post('/api/email/send', welcomeBody({ to: unique() }), anonymous);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(app.fake.accepted.length, 1);
  });

  it('refuses what a phisher would use, each with a clear 400, and sends nothing', async () => {
    const attachment = { filename: 'a.txt', content: Buffer.from('hi').toString('base64') };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ to: [unique(), unique()] }, 'unauthenticated sends take exactly one recipient in to.'],
      [{ cc: unique() }, 'cc is not allowed without authentication.'],
      [{ bcc: [unique()] }, 'bcc is not allowed without authentication.'],
      [{ attachments: [attachment] }, 'attachments is not allowed without authentication.'],
      [{ from: 'Security <security@bank.example>' }, 'from is not allowed without authentication.'],
      [{ reply_to: 'thief@evil.example' }, 'reply_to is not allowed without authentication.'],
    ];
    for (const [patch, error] of cases) {
      const res = await app.post('/api/email/send', welcomeBody({ to: unique(), ...patch }), anonymous);
      assert.equal(res.status, 400, JSON.stringify(patch));
      assert.deepEqual(res.body, { success: false, error });
    }
    assert.equal(app.fake.accepted.length, 0);
  });

  it('refuses link variables that leave the allowed origins', async () => {
    for (const url of [
      'https://evil.example/login',
      'https://app.example.evil.example/login',
      'http://app.example/login',
      'javascript:alert(1)',
    ]) {
      const body = welcomeBody({ to: unique() });
      (body['template_data'] as Record<string, string>)['LOGIN_URL'] = url;
      const res = await app.post('/api/email/send', body, anonymous);
      assert.equal(res.status, 400, url);
      assert.deepEqual(res.body, {
        success: false,
        error: 'LOGIN_URL must point at an allowed origin (SIGNUP_LINK_ORIGINS) without authentication.',
      });
    }
    assert.equal(app.fake.accepted.length, 0);
  });

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

  it('with a key, none of these narrowings apply', async () => {
    const company = randomUUID();
    const { plaintext } = await app.keys.create({ companyId: company, name: 't', scopes: ['email:send'] });
    const to = unique();
    const body = welcomeBody({ to: [to, unique()], cc: unique(), reply_to: 'support@app.example' });
    (body['template_data'] as Record<string, string>)['LOGIN_URL'] = 'https://elsewhere.example/login';
    for (let i = 0; i < 5; i++) {
      const res = await app.post('/api/email/send', body, { authorization: `Bearer ${plaintext}` });
      assert.equal(res.status, 200, JSON.stringify(res.body));
    }
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

  it('takes the client address from X-Forwarded-For when the peer is a trusted proxy', async () => {
    const from = (ip: string) =>
      app.post('/api/email/send', welcomeBody({ to: unique() }), { 'x-forwarded-for': ip });
    assert.equal((await from('203.0.113.10')).status, 200);
    assert.equal((await from('203.0.113.10')).status, 429);
    assert.equal((await from('203.0.113.11')).status, 200);
  });
});
