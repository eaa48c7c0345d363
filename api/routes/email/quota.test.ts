import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Scope } from '../../../core/identity.ts';
import { invoiceBody, useEmailApp } from '../../../test/support/email-app.ts';
import { companyWithKey, keysCommand } from '../../../test/support/company-keys.ts';
import { exposition } from '../../../core/metrics.ts';
import { createDailyQuotas } from '../../../core/email/send/quotas/daily-quota.ts';

/**
 * A company's daily sending limit end to end: the operator's real command
 * (`npm run keys -- quota`, as a process on the same database), then the
 * gateway in AUTH_MODE=api-key: the quota endpoint, sends counted, the 429
 * past the limit, test-mode sends not counted.
 */
describe('daily sending limit', () => {
  const app = useEmailApp({ env: { AUTH_MODE: 'api-key' } });

  const keys = (...args: string[]) => keysCommand(app, ...args);
  const companyWith = async (scopes: Scope[], test = false) => {
    const { id, auth } = await companyWithKey(app, scopes, test);
    return { company: id, auth };
  };

  const send = (auth: Record<string, string>) =>
    app.post('/api/email/send', invoiceBody({ to: `c-${randomUUID()}@example.com` }), auth);

  it('a bulk with room for some items sends those; one with room for none is 429 with Retry-After', async () => {
    const { company, auth } = await companyWith(['email:send']);
    await createDailyQuotas(app.database.db).setLimit(company, 1);
    const items = (n: number) =>
      Array.from({ length: n }, (_, i) => ({
        id: `i${i}`,
        ...invoiceBody({ to: `b${i}-${randomUUID()}@example.com` }),
      }));
    const partly = await app.post('/api/email/bulk', { emails: items(2), batchDelay: 0 }, auth);
    assert.equal(partly.status, 200, JSON.stringify(partly.body));
    assert.deepEqual([partly.body['sent'], partly.body['failed']], [1, 1]);
    const refused = (partly.body['results'] as Array<Record<string, unknown>>).find((r) => !r['success']);
    assert.equal(refused?.['error'], 'daily sending limit reached.');

    const none = await app.post('/api/email/bulk', { emails: items(2), batchDelay: 0 }, auth);
    assert.equal(none.status, 429, JSON.stringify(none.body));
    assert.deepEqual(none.body, { success: false, error: 'daily sending limit reached.' });
    assert.ok(Number(none.headers.get('retry-after')) > 0);
    assert.equal(app.fake.accepted.length, 1);
  });

  it('without a limit: sends are not limited and the quota says so', async () => {
    const { auth } = await companyWith(['email:send']);
    assert.equal((await send(auth)).status, 200);
    const res = await app.get('/api/email/quota', auth);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const data = res.body['data'] as Record<string, unknown>;
    assert.deepEqual(
      { daily_limit: data['daily_limit'], used_today: data['used_today'], remaining: data['remaining'] },
      { daily_limit: null, used_today: null, remaining: null },
    );
    assert.match(String(data['resets_at']), /T00:00:00\.000Z$/);
  });

  it('the operator sets a limit; sends count; past it 429 with Retry-After to UTC midnight', async () => {
    const { company, auth } = await companyWith(['email:send']);
    const set = await keys('quota', '--company', company, '--daily', '2');
    assert.equal(set.code, 0, set.out);
    assert.match(set.out, /may send 2 emails per UTC day/);

    assert.equal((await send(auth)).status, 200);
    assert.equal((await send(auth)).status, 200);
    const over = await send(auth);
    assert.equal(over.status, 429);
    assert.deepEqual(over.body, { success: false, error: 'daily sending limit reached.' });
    const retryAfter = Number(over.headers.get('retry-after'));
    const untilMidnight =
      (Date.parse(new Date().toISOString().slice(0, 10)) + 86_400_000 - Date.now()) / 1000;
    assert.ok(
      Math.abs(retryAfter - untilMidnight) < 5,
      `Retry-After ${retryAfter}, midnight in ${untilMidnight}`,
    );
    assert.equal(app.fake.accepted.length, 2, 'the refused send never reached the provider');

    const quota = await app.get('/api/email/quota', auth);
    assert.deepEqual(
      { ...(quota.body['data'] as Record<string, unknown>), resets_at: undefined },
      { daily_limit: 2, used_today: 2, remaining: 0, resets_at: undefined },
    );
    assert.match((await exposition()).body, /mailroom_daily_limit_refusals_total [1-9]/);

    const shown = await keys('quota', '--company', company);
    assert.match(shown.out, /used today 2, remaining 0/);
    // Raised: sends go again (this replica reads the limit again within 5 s).
    await keys('quota', '--company', company, '--daily', '3');
    await new Promise((r) => setTimeout(r, 5_100));
    assert.equal((await send(auth)).status, 200);
    await keys('quota', '--company', company, '--daily', 'none');
    assert.match((await keys('quota', '--company', company)).out, /has no daily sending limit/);
  });

  it('test-mode sends never count against the limit', async () => {
    const { company, auth } = await companyWith(['email:send'], true);
    await keys('quota', '--company', company, '--daily', '1');
    for (let i = 0; i < 3; i++) assert.equal((await send(auth)).status, 200);
    const data = (await app.get('/api/email/quota', auth)).body['data'] as Record<string, unknown>;
    assert.equal(data['used_today'], 0);
  });

  it('a keys:manage key may read it; a key with neither scope may not', async () => {
    const manager = await companyWith(['keys:manage']);
    assert.equal((await app.get('/api/email/quota', manager.auth)).status, 200);
    const reader = await companyWith(['email:read']);
    const refused = await app.get('/api/email/quota', reader.auth);
    assert.equal(refused.status, 403);
    assert.deepEqual(refused.body, {
      success: false,
      error: 'this API key lacks the email:send or keys:manage scope',
    });
    assert.equal((await app.get('/api/email/quota', {})).status, 401);
  });

  it('the command refuses a bad line with its usage', async () => {
    const bad = await keys('quota', '--company', randomUUID(), '--daily', 'lots');
    assert.equal(bad.code, 1);
    assert.match(bad.out, /--daily must be a whole number/);
    assert.match(bad.out, /usage: npm run keys -- quota/);
    assert.match((await keys('quota', '--company', 'nope')).out, /--company must be the company UUID/);
  });
});
