import { describe, it } from 'node:test';
import { parseKey } from '../../core/api-keys/key-format.ts';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { KEY_CACHE_TTL_MS, createKeyStore } from '../../core/api-keys/key-store.ts';
import type { Scope } from '../../core/identity.ts';
import { invoiceBody, useEmailApp, welcomeBody } from '../../test/support/email-app.ts';

/**
 * AUTH_MODE=api-key (the default outside `npm run dev`), black-box over HTTP
 * against a real gateway and database: keys prove the company; the identity
 * headers must match the key; scopes decide what a key may do.
 */
describe('AUTH_MODE=api-key: email routes', () => {
  const app = useEmailApp({ env: { AUTH_MODE: 'api-key' } });
  const company = randomUUID();
  const organization = randomUUID();
  const user = randomUUID();
  const headers = (key: string, overrides: Record<string, string> = {}) => ({
    authorization: `Bearer ${key}`,
    'x-company-id': company,
    'x-organization-id': organization,
    'x-user-id': user,
    ...overrides,
  });
  const newKey = async (scopes: Scope[] = ['email:send', 'email:read'], organizationId?: string) =>
    (await app.keys.create({ companyId: company, organizationId, name: 'test', scopes })).plaintext;

  it('a valid key with matching headers sends and reads its records', async () => {
    const key = await newKey();
    const sent = await app.post('/api/email/send', invoiceBody(), headers(key));
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    const id = String(sent.body['email_id']);
    // The interface's status request carries X-User-Id only: the key supplies the company.
    const status = await app.get(`/api/email/status/${id}`, {
      authorization: `Bearer ${key}`,
      'x-user-id': user,
    });
    assert.equal(status.status, 200);
    assert.equal((status.body['data'] as Record<string, unknown>)['email_id'], id);
  });

  it('identity headers alone are not enough: 401 unauthorized without a key', async () => {
    const { authorization: _, ...withoutKey } = headers('x');
    for (const [path, body] of [
      ['/api/email/send', invoiceBody()],
      ['/api/email/bulk', { emails: [invoiceBody()] }],
    ] as const) {
      const res = await app.post(path, body, withoutKey);
      assert.equal(res.status, 401, path);
      assert.deepEqual(res.body, { success: false, error: 'unauthorized' });
    }
    const status = await app.get(`/api/email/status/${randomUUID()}`, { 'x-user-id': user });
    assert.equal(status.status, 401);
    assert.equal(app.fake.accepted.length, 0);
  });

  it('unknown, malformed and wrong-secret keys → 401, even on a signup template', async () => {
    const real = await newKey();
    const wrongSecret = `${real.slice(0, -4)}AAAA`;
    for (const key of ['mr_000000000000000000000000_' + 'A'.repeat(43), 'nonsense', wrongSecret]) {
      for (const body of [invoiceBody(), welcomeBody()]) {
        const res = await app.post('/api/email/send', body, headers(key));
        assert.equal(res.status, 401, key);
        assert.deepEqual(res.body, { success: false, error: 'unauthorized' });
      }
    }
    const basic = await app.post('/api/email/send', invoiceBody(), {
      ...headers(real),
      authorization: `Basic ${real}`,
    });
    assert.equal(basic.status, 401);
    assert.equal(app.fake.accepted.length, 0);
  });

  it('headers naming another company (or another organization than the key’s) → 401', async () => {
    const key = await newKey(['email:send'], organization);
    const overrides: Array<Record<string, string>> = [
      { 'x-company-id': randomUUID() },
      { 'x-organization-id': randomUUID() },
    ];
    for (const override of overrides) {
      const res = await app.post('/api/email/send', invoiceBody(), headers(key, override));
      assert.equal(res.status, 401);
      assert.deepEqual(res.body, { success: false, error: 'unauthorized' });
    }
    assert.equal(app.fake.accepted.length, 0);
    // Before what the key may do: headers contradicting a key are 401 even where it lacks the
    // scope, or where a bound key may not go (the company-wide suppression list).
    for (const [path, presented] of [
      [`/api/email/status/${randomUUID()}`, key],
      ['/api/email/suppressions', key],
    ] as const) {
      const res = await app.get(path, headers(presented, { 'x-company-id': randomUUID() }));
      assert.equal(res.status, 401, path);
    }
  });

  it('the seed’s headers are still required with a key: a missing one → 401', async () => {
    const key = await newKey();
    const { 'x-organization-id': _, ...withoutOrganization } = headers(key);
    const res = await app.post('/api/email/send', invoiceBody(), withoutOrganization);
    assert.equal(res.status, 401);
  });

  it('a key without the route’s scope → 403 naming it', async () => {
    const readOnly = await newKey(['email:read']);
    const send = await app.post('/api/email/send', invoiceBody(), headers(readOnly));
    assert.equal(send.status, 403);
    assert.deepEqual(send.body, { success: false, error: 'this API key lacks the email:send scope' });
    const sendOnly = await newKey(['email:send']);
    const sent = await app.post('/api/email/send', invoiceBody(), headers(sendOnly));
    const read = await app.get(`/api/email/status/${String(sent.body['email_id'])}`, headers(sendOnly));
    assert.equal(read.status, 403);
    assert.deepEqual(read.body, { success: false, error: 'this API key lacks the email:read scope' });
  });

  it('another company’s key cannot read this company’s records (404, like an unknown id)', async () => {
    const key = await newKey();
    const sent = await app.post('/api/email/send', invoiceBody(), headers(key));
    const other = randomUUID();
    const { plaintext } = await app.keys.create({ companyId: other, name: 'other', scopes: ['email:read'] });
    // Even naming the sender's user id: the key's company is not the record's.
    const res = await app.get(`/api/email/status/${String(sent.body['email_id'])}`, {
      authorization: `Bearer ${plaintext}`,
      'x-user-id': user,
    });
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { success: false, error: 'email not found.' });
  });

  it('a key bound to an organization reads that organization’s records only; a company-wide key reads all', async () => {
    const [oa, o2] = [randomUUID(), randomUUID()];
    const sendAs = async (org: string) => {
      const key = await newKey(['email:send', 'email:read'], org);
      const res = await app.post(
        '/api/email/send',
        invoiceBody(),
        headers(key, { 'x-organization-id': org }),
      );
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return { key, emailId: String(res.body['email_id']) };
    };
    const a = await sendAs(oa);
    const other = await sendAs(o2);
    const read = (key: string, emailId: string) =>
      app.get(`/api/email/status/${emailId}`, { authorization: `Bearer ${key}`, 'x-user-id': user });

    assert.equal((await read(a.key, a.emailId)).status, 200);
    const foreign = await read(a.key, other.emailId);
    const unknown = await read(a.key, randomUUID());
    assert.deepEqual([foreign.status, foreign.body], [404, { success: false, error: 'email not found.' }]);
    assert.deepEqual(foreign.body, unknown.body);
    const companyWide = await newKey(['email:read']);
    assert.equal((await read(companyWide, a.emailId)).status, 200);
    assert.equal((await read(companyWide, other.emailId)).status, 200);
  });

  it('an organization-bound key’s Idempotency-Keys are its own: another organization’s answer is not replayed', async () => {
    const [oa, o2] = [randomUUID(), randomUUID()];
    const keyA = await newKey(['email:send'], oa);
    const key2 = await newKey(['email:send'], o2);
    const idempotencyKey = `order-${randomUUID()}`;
    const send = (key: string, org: string) =>
      app.post('/api/email/send', invoiceBody(), {
        ...headers(key, { 'x-organization-id': org }),
        'idempotency-key': idempotencyKey,
      });
    const theirs = await send(key2, o2);
    const mine = await send(keyA, oa);
    assert.equal(theirs.status, 200);
    assert.equal(mine.status, 200);
    assert.notEqual(mine.body['email_id'], theirs.body['email_id']);
    assert.equal(app.fake.accepted.length, 2);
  });

  it('ids are stored lower-case whoever spelled them: a key made for an upper-case company id matches any case', async () => {
    const { key, plaintext } = await app.keys.create({
      companyId: company.toUpperCase(),
      organizationId: organization.toUpperCase(),
      name: 'upper',
      scopes: ['email:send', 'email:read'],
    });
    assert.deepEqual([key.companyId, key.organizationId], [company, organization]);
    for (const spell of [(id: string) => id, (id: string) => id.toUpperCase()]) {
      const sent = await app.post(
        '/api/email/send',
        invoiceBody(),
        headers(plaintext, { 'x-company-id': spell(company), 'x-organization-id': spell(organization) }),
      );
      assert.equal(sent.status, 200, JSON.stringify(sent.body));
      const record = await app.database.db
        .collection('emails')
        .findOne({ _id: String(sent.body['email_id']) as never });
      assert.deepEqual([record?.['company_id'], record?.['organization_id']], [company, organization]);
    }
  });

  it('a revoked key is refused at once here, and by another replica within seconds', async () => {
    const key = await newKey();
    // Another gateway replica: its own store, its own cache, the same database.
    const replica = createKeyStore(app.database.db, app.logger);
    assert.ok(await replica.verify(key));
    assert.equal((await app.post('/api/email/send', invoiceBody(), headers(key))).status, 200);
    assert.equal(await app.keys.revoke(key.split('_')[1]!), true);
    assert.equal((await app.post('/api/email/send', invoiceBody(), headers(key))).status, 401);
    assert.ok(KEY_CACHE_TTL_MS <= 5_000);
    await new Promise((resolve) => setTimeout(resolve, KEY_CACHE_TTL_MS + 100));
    assert.equal(await replica.verify(key), undefined);
  });

  it('records when a key was last used and never stores its secret', async () => {
    const key = await newKey();
    await app.post('/api/email/send', invoiceBody(), headers(key));
    const id = key.split('_')[1]!;
    const listed = (await app.keys.list(company)).find((k) => k.id === id);
    assert.ok(listed?.lastUsedAt instanceof Date);
    const doc = await app.database.db.collection('api_keys').findOne({ _id: id as never });
    assert.ok(doc);
    assert.equal(JSON.stringify(doc).includes(parseKey(key)!.secret), false);
    assert.match(String(doc['secret_hash']), /^[0-9a-f]{64}$/);
  });
});

describe('AUTH_MODE=trusted-headers', () => {
  const app = useEmailApp({ env: { AUTH_MODE: 'trusted-headers' } });

  it('believes complete identity headers without a key', async () => {
    const res = await app.post('/api/email/send', invoiceBody(), {
      'x-company-id': randomUUID(),
      'x-organization-id': randomUUID(),
      'x-user-id': randomUUID(),
    });
    assert.equal(res.status, 200);
  });

  it('still answers 401 for missing or malformed headers', async () => {
    const res = await app.post('/api/email/send', invoiceBody(), { 'x-company-id': 'acme' });
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, { success: false, error: 'unauthorized' });
  });
});
