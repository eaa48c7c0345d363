import { describe, it } from 'node:test';
import { parseKey } from '../../../core/api-keys/key-format.ts';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Scope } from '../../../core/identity.ts';
import { invoiceBody, useEmailApp } from '../../../test/support/email-app.ts';
import { MAX_LIVE_KEYS_PER_COMPANY } from './index.ts';

/** /api/keys with a `keys:manage` key, over HTTP against a real gateway in AUTH_MODE=api-key. */
describe('/api/keys', () => {
  const app = useEmailApp({ env: { AUTH_MODE: 'api-key' } });
  const company = randomUUID();
  const organization = randomUUID();
  const bearer = async (scopes: Scope[], companyId = company) =>
    `Bearer ${(await app.keys.create({ companyId, organizationId: organization, name: 'admin', scopes })).plaintext}`;

  it('creates a key whose secret is shown once and works at once, lists it without the secret, revokes it', async () => {
    const admin = await bearer(['keys:manage', 'email:send', 'email:read']);
    const created = await app.post(
      '/api/keys',
      { name: 'billing', scopes: ['email:send'] },
      { authorization: admin },
    );
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const key = created.body['key'] as Record<string, unknown>;
    const secret = String(created.body['secret']);
    assert.equal(key['company_id'], company);
    assert.equal(key['organization_id'], organization);
    assert.deepEqual(key['scopes'], ['email:send']);

    const headers = {
      authorization: `Bearer ${secret}`,
      'x-company-id': company,
      'x-organization-id': organization,
      'x-user-id': randomUUID(),
    };
    assert.equal((await app.post('/api/email/send', invoiceBody(), headers)).status, 200);

    const listed = await app.get('/api/keys', { authorization: admin });
    assert.equal(listed.status, 200);
    const ids = (listed.body['data'] as Array<Record<string, unknown>>).map((k) => k['id']);
    assert.ok(ids.includes(key['id']));
    assert.equal(JSON.stringify(listed.body).includes(parseKey(secret)!.secret), false);

    assert.equal((await app.delete(`/api/keys/${String(key['id'])}`, { authorization: admin })).status, 200);
    assert.equal((await app.post('/api/email/send', invoiceBody(), headers)).status, 401);
  });

  it('a key revokes only keys within its own scopes: a keys:manage key cannot revoke a stronger one', async () => {
    const own = randomUUID();
    const strong = await app.keys.create({
      companyId: own,
      organizationId: organization,
      name: 'strong',
      scopes: ['keys:manage', 'email:send'],
    });
    const weak = await bearer(['keys:manage'], own);
    const refused = await app.delete(`/api/keys/${strong.key.id}`, { authorization: weak });
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.deepEqual(refused.body, {
      success: false,
      error: 'this API key cannot revoke a key with the email:send scope',
    });
    const peer = await app.keys.create({
      companyId: own,
      organizationId: organization,
      name: 'peer',
      scopes: ['keys:manage'],
    });
    assert.equal((await app.delete(`/api/keys/${peer.key.id}`, { authorization: weak })).status, 200);
    const strongBearer = `Bearer ${strong.plaintext}`;
    assert.equal((await app.get('/api/keys', { authorization: strongBearer })).status, 200, 'still works');
  });

  it(`holds a company to ${MAX_LIVE_KEYS_PER_COMPANY} live keys: 409 past it, room again after a revoke`, async () => {
    const own = randomUUID();
    const admin = await bearer(['keys:manage', 'email:send'], own);
    // The admin key is the first; the store makes the rest up to the bound.
    for (let i = 1; i < MAX_LIVE_KEYS_PER_COMPANY; i++)
      await app.keys.create({
        companyId: own,
        organizationId: organization,
        name: `k${i}`,
        scopes: ['email:send'],
      });
    const over = await app.post(
      '/api/keys',
      { name: 'one more', scopes: ['keys:manage'] },
      { authorization: admin },
    );
    assert.equal(over.status, 409, JSON.stringify(over.body));
    assert.deepEqual(over.body, {
      success: false,
      error: `a company may hold at most ${MAX_LIVE_KEYS_PER_COMPANY} live API keys; revoke one first`,
    });
    // Test keys have a cap of their own: the live ones' does not stop them, nor they it.
    const testKey = await app.post(
      '/api/keys',
      { name: 'test one', scopes: ['keys:manage'], test: true },
      { authorization: admin },
    );
    assert.equal(testKey.status, 201, JSON.stringify(testKey.body));
    const listed = await app.get('/api/keys', { authorization: admin });
    const other = (listed.body['data'] as Array<Record<string, unknown>>).find((k) => k['name'] === 'k1')!;
    assert.equal(
      (await app.delete(`/api/keys/${String(other['id'])}`, { authorization: admin })).status,
      200,
    );
    const again = await app.post(
      '/api/keys',
      { name: 'one more', scopes: ['keys:manage'] },
      { authorization: admin },
    );
    assert.equal(again.status, 201, JSON.stringify(again.body));
  });

  it('creates at once never pass the cap: 30 test keys asked for with room for 10 make 10', async () => {
    const own = randomUUID();
    const admin = await bearer(['keys:manage', 'email:send'], own);
    for (let i = 0; i < MAX_LIVE_KEYS_PER_COMPANY - 10; i++)
      await app.keys.create({
        companyId: own,
        organizationId: organization,
        name: `t${i}`,
        scopes: ['email:send'],
        test: true,
      });
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        app.post(
          '/api/keys',
          { name: `at once ${i}`, scopes: ['email:send'], test: true },
          { authorization: admin },
        ),
      ),
    );
    const statuses = answers.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 201).length, 10, statuses.join(' '));
    assert.equal(statuses.filter((s) => s === 409).length, 20, statuses.join(' '));
    const listed = await app.get('/api/keys', { authorization: admin });
    const tests = (listed.body['data'] as Array<Record<string, unknown>>).filter((k) => k['test'] === true);
    assert.equal(tests.length, MAX_LIVE_KEYS_PER_COMPANY);
  });

  it('never grants a scope the creating key lacks, and needs keys:manage', async () => {
    const admin = await bearer(['keys:manage', 'email:send']);
    const escalate = await app.post(
      '/api/keys',
      { name: 'x', scopes: ['workflows:cancel'] },
      { authorization: admin },
    );
    assert.equal(escalate.status, 403);
    assert.deepEqual(escalate.body, {
      success: false,
      error: 'this API key cannot grant the workflows:cancel scope',
    });
    const plain = await bearer(['email:send']);
    const denied = await app.get('/api/keys', { authorization: plain });
    assert.equal(denied.status, 403);
    assert.deepEqual(denied.body, { success: false, error: 'this API key lacks the keys:manage scope' });
    const bad = await app.post('/api/keys', { name: '', scopes: ['root'] }, { authorization: admin });
    assert.equal(bad.status, 400);
  });

  it('a key bound to an organization lists, revokes and creates that organization’s keys only', async () => {
    const [oa, o2] = [randomUUID(), randomUUID()];
    const create = (organizationId: string | undefined, scopes: Scope[]) =>
      app.keys.create({ companyId: company, organizationId, name: 'k', scopes });
    const adminA = `Bearer ${(await create(oa, ['keys:manage', 'email:send'])).plaintext}`;
    const ownA = await create(oa, ['email:send']);
    const theirs = await create(o2, ['email:send']);
    const companyWide = await create(undefined, ['keys:manage', 'email:send']);

    const listed = await app.get('/api/keys', { authorization: adminA });
    assert.equal(listed.status, 200);
    const data = listed.body['data'] as Array<Record<string, unknown>>;
    assert.ok(data.some((k) => k['id'] === ownA.key.id));
    assert.deepEqual(new Set(data.map((k) => k['organization_id'])), new Set([oa]));

    // Revoking another organization's key: 404, exactly like an unknown id; the key keeps working.
    const revoke = await app.delete(`/api/keys/${theirs.key.id}`, { authorization: adminA });
    const unknown = await app.delete(`/api/keys/${'0'.repeat(24)}`, { authorization: adminA });
    assert.deepEqual([revoke.status, revoke.body], [404, { success: false, error: 'api key not found' }]);
    assert.deepEqual(revoke.body, unknown.body);
    assert.ok(await app.keys.verify(theirs.plaintext));
    assert.ok(await app.keys.verify(companyWide.plaintext), 'nor a company-wide key');
    assert.equal(
      (await app.delete(`/api/keys/${companyWide.key.id}`, { authorization: adminA })).status,
      404,
    );

    // What it creates is bound to its organization, never company-wide.
    const made = await app.post(
      '/api/keys',
      { name: 'child', scopes: ['keys:manage'] },
      { authorization: adminA },
    );
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.equal((made.body['key'] as Record<string, unknown>)['organization_id'], oa);
    const child = `Bearer ${String(made.body['secret'])}`;
    const childList = (await app.get('/api/keys', { authorization: child })).body['data'] as Array<
      Record<string, unknown>
    >;
    assert.ok(childList.every((k) => k['organization_id'] === oa));
    assert.equal((await app.delete(`/api/keys/${ownA.key.id}`, { authorization: adminA })).status, 200);

    // A company-wide key sees and manages every organization's keys.
    const all = (await app.get('/api/keys', { authorization: `Bearer ${companyWide.plaintext}` })).body[
      'data'
    ] as Array<Record<string, unknown>>;
    assert.ok(all.some((k) => k['id'] === theirs.key.id) && all.some((k) => k['id'] === ownA.key.id));
    const revoked = await app.delete(`/api/keys/${theirs.key.id}`, {
      authorization: `Bearer ${companyWide.plaintext}`,
    });
    assert.equal(revoked.status, 200);
  });

  it("another company's keys are invisible and cannot be revoked (404)", async () => {
    const mine = await bearer(['keys:manage']);
    const theirs = await app.keys.create({ companyId: randomUUID(), name: 'theirs', scopes: ['email:send'] });
    const listed = await app.get('/api/keys', { authorization: mine });
    assert.equal(JSON.stringify(listed.body).includes(theirs.key.id), false);
    const revoke = await app.delete(`/api/keys/${theirs.key.id}`, { authorization: mine });
    assert.equal(revoke.status, 404);
    assert.deepEqual(revoke.body, { success: false, error: 'api key not found' });
    assert.ok(await app.keys.verify(theirs.plaintext));
  });
});
