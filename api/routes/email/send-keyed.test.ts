import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createDailyQuotas } from '../../../core/email/send/quotas/daily-quota.ts';
import { useEmailApp, welcomeBody } from '../../../test/support/email-app.ts';
import { companyWithKey } from '../../../test/support/company-keys.ts';

/**
 * A send proven by an API key belongs to the key's company even when it
 * leaves out the identity headers, as a signup template may: otherwise it
 * is recorded without an owner, readable by another company naming its
 * `X-User-Id`, outside the company's daily limit and suppression list.
 */
describe('sends proven by an API key, without X-Company-Id', () => {
  const app = useEmailApp({ env: { AUTH_MODE: 'api-key' } });

  const company = () => companyWithKey(app);

  it("are the key's company's: another company naming the same X-User-Id gets 404", async () => {
    const [a, b] = [await company(), await company()];
    const user = { 'x-user-id': randomUUID() };
    const sent = await app.post('/api/email/send', welcomeBody({ to: 'first@example.com' }), {
      ...a.key,
      ...user,
    });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    const emailId = String(sent.body['email_id']);
    const record = await app.database.db.collection('emails').findOne({ _id: emailId as never });
    assert.equal(record?.['company_id'], a.id);

    const byOther = await app.get(`/api/email/status/${emailId}`, { ...b.key, ...user });
    assert.equal(byOther.status, 404, JSON.stringify(byOther.body));
    const byOwner = await app.get(`/api/email/status/${emailId}`, { ...a.key, ...user });
    assert.equal(byOwner.status, 200, JSON.stringify(byOwner.body));
  });

  it('without a key, belong to no company: the same X-User-Id reads it with a key, nobody else', async () => {
    const [a, b] = [await company(), await company()];
    const user = { 'x-user-id': randomUUID() };
    const sent = await app.post('/api/email/send', welcomeBody({ to: 'anon@example.com' }), {
      ...user,
      'x-company-id': a.id,
    });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    const emailId = String(sent.body['email_id']);
    const record = await app.database.db.collection('emails').findOne({ _id: emailId as never });
    assert.equal(record?.['company_id'], null, 'an unproven X-Company-Id grants nothing');
    // A key bound to an organization reads it too: the record is no organization's.
    const { plaintext } = await app.keys.create({
      companyId: a.id,
      organizationId: randomUUID(),
      name: 'bound',
      scopes: ['email:read'],
    });
    for (const key of [a.key, b.key, { authorization: `Bearer ${plaintext}` }]) {
      const mine = await app.get(`/api/email/status/${emailId}`, { ...key, ...user });
      assert.equal(mine.status, 200, JSON.stringify(mine.body));
      const other = await app.get(`/api/email/status/${emailId}`, { ...key, 'x-user-id': randomUUID() });
      assert.equal(other.status, 404);
    }
  });

  it("count against the company's daily limit", async () => {
    const a = await company();
    await createDailyQuotas(app.database.db).setLimit(a.id, 1);
    const send = () =>
      app.post('/api/email/send', welcomeBody({ to: `q-${randomUUID()}@example.com` }), a.key);
    assert.equal((await send()).status, 200);
    const over = await send();
    assert.equal(over.status, 429, JSON.stringify(over.body));
    assert.deepEqual(over.body, { success: false, error: 'daily sending limit reached.' });
  });

  it("are checked against the company's suppression list", async () => {
    const a = await company();
    const to = `unsubscribed-${randomUUID()}@example.com`;
    const added = await app.post('/api/email/suppressions', { email: to }, a.key);
    assert.equal(added.status, 201, JSON.stringify(added.body));
    const res = await app.post('/api/email/send', welcomeBody({ to }), a.key);
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.match(String(res.body['error']), /^all recipients are suppressed: /);
    assert.equal(app.fake.accepted.length, 0);
  });
});
