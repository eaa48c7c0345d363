import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Scope } from '../../../core/identity.ts';
import { invoiceBody, useEmailApp } from '../../../test/support/email-app.ts';

/**
 * Test-mode keys over HTTP against a real gateway in AUTH_MODE=api-key: sends
 * are validated, recorded and tracked like live ones and never reach the
 * provider (the fake SendGrid counts every request it gets).
 */
describe('test-mode keys', () => {
  const app = useEmailApp({ env: { AUTH_MODE: 'api-key' } });
  const company = randomUUID();
  const organization = randomUUID();
  const identity = { 'x-company-id': company, 'x-organization-id': organization, 'x-user-id': randomUUID() };
  const key = async (test: boolean, scopes: Scope[] = ['email:send', 'email:read', 'keys:manage']) =>
    (await app.keys.create({ companyId: company, organizationId: organization, name: 'k', scopes, test }))
      .plaintext;

  async function sendTo(to: string, secret: string) {
    const res = await app.post('/api/email/send', invoiceBody({ to }), {
      ...identity,
      authorization: `Bearer ${secret}`,
    });
    return res;
  }
  const statusOf = async (emailId: string, secret: string) =>
    app.get(`/api/email/status/${emailId}`, { ...identity, authorization: `Bearer ${secret}` });

  it('POST /api/keys with "test": true makes an mr_test_ key; a test key makes test keys only', async () => {
    const live = await key(false);
    const created = await app.post(
      '/api/keys',
      { name: 'ci', scopes: ['email:send'], test: true },
      { authorization: `Bearer ${live}` },
    );
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.match(String(created.body['secret']), /^mr_test_[0-9a-f]{24}_/);
    assert.equal((created.body['key'] as Record<string, unknown>)['test'], true);

    const testAdmin = await key(true);
    // Asked for a live one, refused; unasked, a test key.
    const refused = await app.post(
      '/api/keys',
      { name: 'x', scopes: ['email:send'], test: false },
      { authorization: `Bearer ${testAdmin}` },
    );
    assert.equal(refused.status, 403);
    assert.deepEqual(refused.body, { success: false, error: 'a test-mode key creates test-mode keys only' });
    const minted = await app.post(
      '/api/keys',
      { name: 'x', scopes: ['email:send'] },
      { authorization: `Bearer ${testAdmin}` },
    );
    assert.equal(minted.status, 201);
    assert.match(String(minted.body['secret']), /^mr_test_/);
  });

  it('a test key with keys:manage never lists or revokes a live key; a live key manages both', async () => {
    const live = await key(false);
    const testAdmin = await key(true);
    const asTest = await app.get('/api/keys', { authorization: `Bearer ${testAdmin}` });
    const modes = (asTest.body['data'] as Array<Record<string, unknown>>).map((k) => k['test']);
    assert.ok(modes.length > 0 && modes.every((t) => t === true), JSON.stringify(modes));
    const liveId = live.split('_')[1]!;
    const revoke = await app.delete(`/api/keys/${liveId}`, { authorization: `Bearer ${testAdmin}` });
    assert.equal(revoke.status, 404);
    assert.equal((await sendTo('someone@example.com', live)).status, 200, 'the live key still works');
    const asLive = await app.get('/api/keys', { authorization: `Bearer ${live}` });
    const liveModes = new Set((asLive.body['data'] as Array<Record<string, unknown>>).map((k) => k['test']));
    assert.deepEqual([...liveModes].sort(), [false, true]);
    assert.ok((asLive.body['data'] as Array<Record<string, unknown>>).some((k) => k['id'] === liveId));
  });

  it('a test send is recorded, follows the recipient address, and never reaches the provider', async () => {
    const test = await key(true);
    const cases: Array<[string, number, string]> = [
      ['delivered@example.com', 200, 'delivered'],
      ['opened+run1@example.com', 200, 'opened'],
      ['bounced@example.com', 200, 'bounced'],
      ['delayed@example.com', 200, 'sent'],
      ['complained@example.com', 200, 'delivered'],
      ['someone@example.com', 200, 'sent'],
    ];
    for (const [to, code, status] of cases) {
      const res = await sendTo(to, test);
      assert.equal(res.status, code, `${to}: ${JSON.stringify(res.body)}`);
      const seen = await statusOf(String(res.body['email_id']), test);
      assert.equal(seen.status, 200);
      const data = seen.body['data'] as Record<string, unknown>;
      assert.equal(data['status'], status, to);
      assert.equal(data['provider'], 'test');
      // Marked in both answers; a live send's answers carry no such field.
      assert.equal(res.body['test'], true, to);
      assert.equal(data['test'], true, to);
    }
    const live = await key(false);
    const liveSend = await sendTo('someone@example.com', live);
    assert.equal(liveSend.status, 200);
    assert.equal('test' in liveSend.body, false);
    const liveStatus = await statusOf(String(liveSend.body['email_id']), live);
    assert.equal('test' in (liveStatus.body['data'] as Record<string, unknown>), false);
    // Answered as a live provider's rejection is: 500 with the provider's words.
    const rejected = await sendTo('rejected@example.com', test);
    assert.equal(rejected.status, 500);
    assert.match(String(rejected.body['error']), /test mode: rejected@ address/);
    assert.equal(app.fake.received.length, 1, 'only the live send reached the provider');

    // Bulk items and scheduled sends say so too.
    const bulk = await app.post(
      '/api/email/bulk',
      { emails: [invoiceBody({ to: 'someone@example.com' })], batchDelay: 0 },
      { ...identity, authorization: `Bearer ${test}` },
    );
    assert.equal(bulk.status, 200, JSON.stringify(bulk.body));
    assert.equal((bulk.body['results'] as Array<Record<string, unknown>>)[0]!['test'], true);
    const scheduled = await app.post(
      '/api/email/send',
      invoiceBody({ to: 'someone@example.com', send_at: new Date(Date.now() + 3_600_000).toISOString() }),
      { ...identity, authorization: `Bearer ${test}` },
    );
    assert.equal(scheduled.status, 200, JSON.stringify(scheduled.body));
    assert.equal(scheduled.body['scheduled'], true);
    assert.equal(scheduled.body['test'], true);
  });

  it('test and live data are apart: each key sees its own mode only', async () => {
    const test = await key(true);
    const live = await key(false);
    const testSend = await sendTo('delivered@example.com', test);
    const liveSend = await sendTo('customer@example.com', live);
    assert.equal(app.fake.received.length, 1, 'only the live send reached the provider');
    assert.equal((await statusOf(String(testSend.body['email_id']), live)).status, 404);
    assert.equal((await statusOf(String(liveSend.body['email_id']), test)).status, 404);
    assert.equal((await statusOf(String(liveSend.body['email_id']), live)).status, 200);
  });

  it('complained@ and bounced@ suppress the address on the test list only, as live events would', async () => {
    const companyWide = async (test: boolean) =>
      (
        await app.keys.create({
          companyId: company,
          organizationId: null,
          name: 'c',
          scopes: ['email:send', 'email:read'],
          test,
        })
      ).plaintext;
    const [test, live] = [await companyWide(true), await companyWide(false)];
    const suppression = (address: string, secret: string) =>
      app.get(`/api/email/suppressions/${address}`, { ...identity, authorization: `Bearer ${secret}` });
    for (const [address, status, reason] of [
      ['complained+x@example.com', 'delivered', 'spam_report'],
      ['bounced+x@example.com', 'bounced', 'bounce'],
    ] as const) {
      const sent = await sendTo(address, test);
      assert.equal(sent.status, 200);
      const seen = (await statusOf(String(sent.body['email_id']), test)).body['data'] as Record<
        string,
        unknown
      >;
      assert.equal(seen['status'], status, address);
      const entry = await suppression(address, test);
      assert.equal(entry.status, 200, `${address} on the test list`);
      assert.equal((entry.body['data'] as Record<string, unknown>)['reason'], reason);
      assert.equal((await suppression(address, live)).status, 404, `${address} not on the live list`);
      // The next test send to it is left out, as a live one would be.
      const again = await sendTo(address, test);
      assert.equal(again.status, 400, JSON.stringify(again.body));
    }
    // Live sends still reach the address.
    assert.equal((await sendTo('complained+x@example.com', live)).status, 200);
  });

  it('a live key presented with the test prefix (or the reverse) is refused', async () => {
    const live = await key(false);
    const forged = live.replace(/^mr_/, 'mr_test_');
    assert.equal((await sendTo('someone@example.com', forged)).status, 401);
  });
});
