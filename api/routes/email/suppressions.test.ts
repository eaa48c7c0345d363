import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { statusOf, type EmailRecord } from '../../../core/email/records/record.ts';
import { AUTH, invoiceBody, useEmailApp } from '../../../test/support/email-app.ts';

/** Another company's complete identity (trusted-headers mode, like behind an authenticating proxy). */
const otherCompany = () => ({
  'x-company-id': randomUUID(),
  'x-organization-id': randomUUID(),
  'x-user-id': randomUUID(),
});
const unique = (name: string) => `${name}.${randomUUID().slice(0, 8)}@example.com`;

describe('the suppression list', () => {
  const app = useEmailApp({ env: { SENDGRID_WEBHOOK_ALLOW_UNSIGNED: 'true' } });

  const record = async (emailId: string) => {
    const doc = await app.database.db.collection<EmailRecord>('emails').findOne({ _id: emailId });
    assert.ok(doc, `record ${emailId}`);
    return { ...doc, status: statusOf(doc) };
  };
  const suppress = (email: string, extra: Record<string, unknown> = {}, headers = AUTH) =>
    app.post('/api/email/suppressions', { email, ...extra }, headers);
  const lookup = (email: string, headers = AUTH) =>
    app.get(`/api/email/suppressions/${encodeURIComponent(email)}`, headers);
  /** Every address SendGrid was asked to deliver to. */
  const deliveredTo = () =>
    app.fake.received.flatMap((r) =>
      r.body.personalizations.flatMap((p) =>
        [...p.to, ...(p.cc ?? []), ...(p.bcc ?? [])].map((a) => a.email),
      ),
    );

  it('adds, reads, lists and removes an address by hand', async () => {
    const address = unique('Manual');
    const added = await suppress(address, { note: 'asked by phone' });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    const data = added.body['data'] as Record<string, unknown>;
    assert.equal(data['email'], address.toLowerCase());
    assert.equal(data['reason'], 'manual');
    assert.equal(data['source'], 'api');
    assert.equal(data['detail'], 'asked by phone');

    const again = await suppress(address.toUpperCase());
    assert.equal(again.status, 200, 'adding it again is not a second entry');

    const found = await lookup(address);
    assert.equal(found.status, 200);
    assert.equal((found.body['data'] as Record<string, unknown>)['reason'], 'manual');

    const removed = await app.delete(`/api/email/suppressions/${encodeURIComponent(address)}`);
    assert.deepEqual([removed.status, removed.body], [200, { success: true }]);
    const gone = await lookup(address);
    assert.deepEqual([gone.status, gone.body], [404, { success: false, error: 'suppression not found.' }]);
    const twice = await app.delete(`/api/email/suppressions/${encodeURIComponent(address)}`);
    assert.equal(twice.status, 404);
  });

  it('refuses a send whose recipients are all suppressed: 400 naming the reason, nothing sent, record failed', async () => {
    const address = unique('gone');
    await suppress(address, { reason: 'unsubscribe' });
    const res = await app.post('/api/email/send', invoiceBody({ to: address }));
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, {
      success: false,
      error: `all recipients are suppressed: ${address} (unsubscribe). nothing was sent.`,
    });
    assert.equal(app.fake.received.length, 0, 'the provider was not called');

    const failed = await app.database.db
      .collection<EmailRecord>('emails')
      .findOne({ recipient_email: address });
    assert.ok(failed, 'the refused send is recorded');
    assert.equal(statusOf(failed), 'failed');
    assert.equal(failed.error, res.body['error']);
    assert.deepEqual(failed.suppressed, [{ email: address, reason: 'unsubscribe' }]);
    const status = await app.get(`/api/email/status/${failed.email_id}`);
    assert.equal((status.body['data'] as Record<string, unknown>)['status'], 'failed');
  });

  it('sends to the others and says which recipients were skipped', async () => {
    const kept = unique('kept');
    const skipped = unique('skipped');
    const skippedCc = unique('cc');
    await suppress(skipped);
    await suppress(skippedCc, { reason: 'spam_report' });
    const res = await app.post('/api/email/send', invoiceBody({ to: [skipped, kept], cc: skippedCc }));
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body['suppressed'], [
      { email: skipped, reason: 'manual' },
      { email: skippedCc, reason: 'spam_report' },
    ]);
    assert.deepEqual(deliveredTo(), [kept]);
    const stored = await record(String(res.body['email_id']));
    assert.equal(stored.status, 'sent');
    assert.equal(stored.recipient_email, kept);
    assert.deepEqual(stored.recipients.to, [{ email: kept }]);
    assert.deepEqual(stored.recipients.cc, []);
    assert.deepEqual(stored.suppressed, res.body['suppressed']);
  });

  it('every to suppressed, cc left: the cc become the to; only bcc left: refused', async () => {
    const skipped = unique('to');
    const copy = unique('cc');
    await suppress(skipped);
    const res = await app.post('/api/email/send', invoiceBody({ to: skipped, cc: copy }));
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body['suppressed'], [{ email: skipped, reason: 'manual' }]);
    assert.deepEqual(deliveredTo(), [copy]);
    assert.deepEqual(app.fake.received[0]!.body.personalizations[0]!.to, [{ email: copy }]);
    const stored = await record(String(res.body['email_id']));
    assert.equal(stored.recipient_email, copy);
    assert.deepEqual(stored.recipients.cc, []);

    app.fake.reset();
    const hidden = unique('bcc');
    const bccOnly = await app.post('/api/email/send', invoiceBody({ to: skipped, bcc: hidden }));
    assert.equal(bccOnly.status, 400, JSON.stringify(bccOnly.body));
    assert.match(String(bccOnly.body['error']), /^all to recipients are suppressed: /);
    assert.equal(app.fake.received.length, 0);
  });

  it('never lets one company’s list affect another company', async () => {
    const address = unique('shared');
    await suppress(address);
    const other = otherCompany();
    assert.equal((await lookup(address, other)).status, 404, 'invisible to another company');
    const list = await app.get('/api/email/suppressions', other);
    assert.deepEqual(list.body['data'], []);
    assert.equal(
      (await app.delete(`/api/email/suppressions/${encodeURIComponent(address)}`, other)).status,
      404,
      'another company cannot remove it',
    );
    const sent = await app.post('/api/email/send', invoiceBody({ to: address }), other);
    assert.equal(sent.status, 200, 'another company still reaches the address');
    assert.deepEqual(deliveredTo(), [address]);
    assert.equal((await lookup(address)).status, 200, 'still suppressed for its own company');
  });

  it('reports suppressions per bulk item', async () => {
    const gone = unique('bulk-gone');
    await suppress(gone);
    const ok = unique('bulk-ok');
    const res = await app.post('/api/email/bulk', {
      batchDelay: 0,
      emails: [invoiceBody({ id: 'a', to: gone }), invoiceBody({ id: 'b', to: [ok, gone] })],
    });
    assert.equal(res.status, 200);
    const [a, b] = res.body['results'] as Array<Record<string, unknown>>;
    assert.deepEqual(a, {
      id: 'a',
      success: false,
      error: `all recipients are suppressed: ${gone} (manual). nothing was sent.`,
    });
    assert.equal(b?.['success'], true);
    assert.deepEqual(b?.['suppressed'], [{ email: gone, reason: 'manual' }]);
    assert.deepEqual(deliveredTo(), [ok]);
  });

  it('pages through the list in address order and filters by reason', async () => {
    const company = otherCompany();
    const addresses = ['a', 'b', 'c', 'd', 'e'].map((l) => `${l}@list.example.com`);
    for (const [i, address] of addresses.entries())
      assert.equal((await suppress(address, { reason: i % 2 ? 'bounce' : 'manual' }, company)).status, 201);

    /** Every address, page by page (2 a page): the page's place passed as `param`, read from `field`. */
    const pageThrough = async (param: 'after' | 'cursor', field: 'next' | 'nextCursor') => {
      const seen: string[] = [];
      let at: string | null = null;
      do {
        const query: string = `?limit=2${at ? `&${param}=${encodeURIComponent(at)}` : ''}`;
        const page = await app.get(`/api/email/suppressions${query}`, company);
        assert.equal(page.status, 200, JSON.stringify(page.body));
        const data = page.body['data'] as Array<{ email: string }>;
        assert.ok(data.length <= 2);
        assert.equal(page.body['nextCursor'], page.body['next']);
        seen.push(...data.map((d) => d.email));
        at = page.body[field] as string | null;
      } while (at);
      return seen;
    };
    assert.deepEqual(await pageThrough('after', 'next'), addresses);

    const bounces = await app.get('/api/email/suppressions?reason=bounce', company);
    assert.deepEqual(
      (bounces.body['data'] as Array<{ email: string }>).map((d) => d.email),
      ['b@list.example.com', 'd@list.example.com'],
    );
    assert.equal(bounces.body['next'], null);

    // Paged by the names the other lists use: `nextCursor` passed as `cursor`, the same pages.
    assert.deepEqual(await pageThrough('cursor', 'nextCursor'), addresses);
    const both = await app.get(
      '/api/email/suppressions?after=a%40list.example.com&cursor=c%40list.example.com',
      company,
    );
    assert.equal(both.status, 400);
    assert.deepEqual(both.body, {
      success: false,
      error: 'after and cursor name different pages; give one of them.',
    });
  });

  it('answers bad input with 400, and callers without identity with 401', async () => {
    const badAddress = await suppress('not-an-address');
    assert.deepEqual(badAddress.body, { success: false, error: 'invalid email address provided.' });
    const badReason = await suppress(unique('x'), { reason: 'bored' });
    assert.equal(badReason.status, 400);
    assert.match(String(badReason.body['error']), /reason/);
    for (const query of ['?limit=0', '?limit=101', '?limit=ten', '?reason=bored', '?colour=red']) {
      const res = await app.get(`/api/email/suppressions${query}`);
      assert.equal(res.status, 400, query);
      assert.equal(res.body['success'], false);
    }
    assert.equal((await app.get('/api/email/suppressions/not-an-address')).status, 400);
    assert.equal((await app.get('/api/email/suppressions', {})).status, 401);
    assert.equal((await app.post('/api/email/suppressions', { email: unique('y') }, {})).status, 401);
  });

  describe('from the provider’s events', () => {
    const sendTo = async (to: string) => {
      const res = await app.post('/api/email/send', invoiceBody({ to }));
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return String(res.body['email_id']);
    };
    const deliver = (events: Array<Record<string, unknown>>) =>
      app.post(
        '/api/email/webhooks/sendgrid',
        events.map((e) => ({ timestamp: Math.floor(Date.now() / 1000), sg_event_id: randomUUID(), ...e })),
      );
    const reasonOf = async (address: string) => {
      const res = await lookup(address);
      return res.status === 200 ? (res.body['data'] as Record<string, unknown>)['reason'] : undefined;
    };

    it('suppresses on a hard bounce, a dropped bounced address, a spam report and an unsubscribe', async () => {
      const cases: Array<[Record<string, unknown>, string | undefined]> = [
        [{ event: 'bounce', type: 'bounce', reason: '550 5.1.1 unknown user' }, 'bounce'],
        [{ event: 'bounce', type: 'blocked', reason: '421 try later' }, undefined],
        [{ event: 'dropped', reason: 'Bounced Address' }, 'bounce'],
        [{ event: 'dropped', reason: 'Invalid SMTPAPI header' }, undefined],
        [{ event: 'spamreport' }, 'spam_report'],
        [{ event: 'unsubscribe' }, 'unsubscribe'],
        [{ event: 'group_unsubscribe' }, 'unsubscribe'],
      ];
      for (const [fields, expected] of cases) {
        const address = unique('event');
        const emailId = await sendTo(address);
        const res = await deliver([{ ...fields, email: address, email_id: emailId }]);
        assert.equal(res.status, 200);
        assert.equal(await reasonOf(address), expected, JSON.stringify(fields));
      }
      const bounced = unique('bounced');
      const id = await sendTo(bounced);
      await deliver([{ event: 'bounce', email: bounced, email_id: id, reason: '550 no such user' }]);
      const entry = (await lookup(bounced)).body['data'] as Record<string, unknown>;
      assert.deepEqual(
        { source: entry['source'], email_id: entry['email_id'], detail: entry['detail'] },
        { source: 'webhook', email_id: id, detail: '550 no such user' },
      );
      // The next send to that address is refused.
      const next = await app.post('/api/email/send', invoiceBody({ to: bounced }));
      assert.equal(next.status, 400);
      assert.match(String(next.body['error']), /suppressed: .* \(bounce\)/);
    });

    it('ignores an event naming an address the email was not sent to', async () => {
      const emailId = await sendTo(unique('real'));
      const stranger = unique('stranger');
      await deliver([{ event: 'spamreport', email: stranger, email_id: emailId }]);
      assert.equal(await reasonOf(stranger), undefined);
    });

    it('keeps a spam report when the address later bounces', async () => {
      const address = unique('complainer');
      const first = await sendTo(address);
      await deliver([{ event: 'spamreport', email: address, email_id: first }]);
      await app.delete(`/api/email/suppressions/${encodeURIComponent(address)}`);
      await suppress(address, { reason: 'spam_report' });
      await deliver([{ event: 'bounce', email: address, email_id: first }]);
      assert.equal(await reasonOf(address), 'spam_report');
    });

    it('a later manual add keeps a spam report whole; on a manual entry it keeps the note it does not replace', async () => {
      const complainer = unique('reported');
      const sent = await sendTo(complainer);
      await deliver([{ event: 'spamreport', email: complainer, email_id: sent }]);
      const reported = (await lookup(complainer)).body['data'];
      const again = await suppress(complainer, { note: 'override' });
      assert.equal(again.status, 200);
      assert.deepEqual(again.body['data'], reported, 'the recipient’s own report stands, its email id kept');

      const called = unique('called');
      await suppress(called, { note: 'asked by phone' });
      const refreshed = await suppress(called, {});
      assert.equal(refreshed.status, 200);
      assert.equal((refreshed.body['data'] as Record<string, unknown>)['detail'], 'asked by phone');
      const renoted = await suppress(called, { note: 'asked again' });
      assert.equal((renoted.body['data'] as Record<string, unknown>)['detail'], 'asked again');
    });
  });
});

describe('the suppression list with API keys', () => {
  const app = useEmailApp({ env: { AUTH_MODE: 'api-key' } });
  const company = randomUUID();
  const bearer = async (organizationId?: string) =>
    `Bearer ${(await app.keys.create({ companyId: company, organizationId, name: 's', scopes: ['email:send', 'email:read'] })).plaintext}`;

  it('is the company’s: a company-wide key manages it, a key bound to an organization gets 403', async () => {
    const address = unique('Shared');
    const companyWide = { authorization: await bearer() };
    assert.equal((await app.post('/api/email/suppressions', { email: address }, companyWide)).status, 201);

    const bound = { authorization: await bearer(randomUUID()) };
    const path = `/api/email/suppressions/${encodeURIComponent(address)}`;
    const error = {
      success: false,
      error:
        'this API key is bound to an organization; this route acts for the whole company and needs a company-wide key',
    };
    for (const res of [
      await app.get('/api/email/suppressions', bound),
      await app.get(path, bound),
      await app.post('/api/email/suppressions', { email: unique('Other') }, bound),
      await app.delete(path, bound),
    ])
      assert.deepEqual([res.status, res.body], [403, error]);
    assert.equal((await app.get(path, companyWide)).status, 200, 'still suppressed');
  });
});
