import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { STATUS_RANK } from '../../../core/email/records/record.ts';
import { AUTH, invoiceBody, useEmailApp, welcomeBody } from '../../../test/support/email-app.ts';

describe('POST /api/email/bulk', () => {
  const app = useEmailApp();

  const items = (n: number, prefix = 'item') =>
    Array.from({ length: n }, (_, i) => ({
      id: `${prefix}-${i}`,
      ...invoiceBody({ to: `r${i}@example.com` }),
    }));

  it('all succeed: 200, counts, every result in request order with its id and email_id', async () => {
    const res = await app.post('/api/email/bulk', { emails: items(3), batchDelay: 0 });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body['success'], true);
    assert.equal(res.body['total'], 3);
    assert.equal(res.body['sent'], 3);
    assert.equal(res.body['failed'], 0);
    const results = res.body['results'] as Array<Record<string, unknown>>;
    assert.deepEqual(
      results.map((r) => r['id']),
      ['item-0', 'item-1', 'item-2'],
    );
    for (const r of results) {
      assert.equal(r['success'], true);
      assert.match(String(r['email_id']), /^[0-9a-f-]{36}$/);
    }
    assert.equal(app.fake.accepted.length, 3);
    // Each result's email_id is the record of that item's recipient.
    for (const [i, r] of results.entries()) {
      const data = (await app.get(`/api/email/status/${String(r['email_id'])}`)).body['data'] as Record<
        string,
        unknown
      >;
      assert.equal(data['recipient_email'], `r${i}@example.com`);
    }
  });

  it('partial failure: 200, success false, failures carry their own error, order kept', async () => {
    const emails = [
      { id: 'good-1', ...invoiceBody() },
      { id: 'bad-address', ...invoiceBody({ to: 'nope' }) },
      { id: 'good-2', ...invoiceBody() },
      { id: 'bad-template', ...invoiceBody({ template_id: 'missing' }) },
      { id: 'blocked', ...invoiceBody({ to: 'x@blocked.example' }) },
      { id: 'unknown-field', ...invoiceBody({ colour: 'red' }) },
      'not an object',
    ];
    const res = await app.post('/api/email/bulk', { emails, batchDelay: 0 });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body['success'], false);
    assert.equal(res.body['total'], 7);
    assert.equal(res.body['sent'], 2);
    assert.equal(res.body['failed'], 5);
    assert.deepEqual(res.body['results'], [
      {
        id: 'good-1',
        success: true,
        email_id: (res.body['results'] as Array<Record<string, unknown>>)[0]!['email_id'],
      },
      { id: 'bad-address', success: false, error: 'invalid email address provided.' },
      {
        id: 'good-2',
        success: true,
        email_id: (res.body['results'] as Array<Record<string, unknown>>)[2]!['email_id'],
      },
      { id: 'bad-template', success: false, error: 'email template not found.' },
      { id: 'blocked', success: false, error: 'emails to this domain are not allowed.' },
      { id: 'unknown-field', success: false, error: 'unknown field: colour.' },
      { success: false, error: 'each email must be a JSON object.' },
    ]);
    assert.equal(app.fake.accepted.length, 2);
  });

  it('provider failures are per item', async () => {
    app.fake.plan(500);
    const res = await app.post('/api/email/bulk', { emails: items(3), batchDelay: 0 });
    assert.equal(res.status, 200);
    assert.equal(res.body['success'], false);
    assert.equal(res.body['sent'], 2);
    assert.equal(res.body['failed'], 1);
    const failed = (res.body['results'] as Array<Record<string, unknown>>).filter((r) => !r['success']);
    assert.equal(failed.length, 1);
    assert.match(String(failed[0]!['error']), /^email provider unavailable: HTTP 500/);
    assert.equal(
      await app.database.db
        .collection('emails')
        .countDocuments({ status_rank: STATUS_RANK.failed, error: failed[0]!['error'] }),
      1,
    );
  });

  it('more than 100 emails → 400 too many emails. maximum is 100.', async () => {
    const res = await app.post('/api/email/bulk', { emails: items(101), batchDelay: 0 });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { success: false, error: 'too many emails. maximum is 100.' });
    assert.equal(app.fake.received.length, 0);
  });

  it('envelope errors → 400', async () => {
    const cases: Array<[unknown, string]> = [
      [{}, 'missing required fields: emails'],
      [{ emails: [] }, 'missing required fields: emails'],
      [{ emails: 'x' }, 'invalid field emails: must be an array.'],
      [{ emails: items(1), batchDelay: 10_001 }, 'invalid field batchDelay: must be <= 10000.'],
      [{ emails: items(1), batchDelay: -1 }, 'invalid field batchDelay: must be >= 0.'],
      [{ emails: items(1), batchDelay: 'soon' }, 'invalid field batchDelay: must be a number.'],
      [{ emails: items(1), extra: true }, 'unknown field: extra.'],
      [[1, 2], 'request body must be a JSON object.'],
    ];
    for (const [body, error] of cases) {
      const res = await app.post('/api/email/bulk', body);
      assert.equal(res.status, 400, JSON.stringify(body).slice(0, 80));
      assert.deepEqual(res.body, { success: false, error });
    }
    assert.equal(app.fake.received.length, 0);
  });

  it('batches of 50 with batchDelay between them: 51 items with 300 ms take at least 300 ms', async () => {
    const started = Date.now();
    const res = await app.post('/api/email/bulk', { emails: items(51), batchDelay: 300 });
    const elapsed = Date.now() - started;
    assert.equal(res.status, 200);
    assert.equal(res.body['sent'], 51);
    assert.ok(elapsed >= 300, `took ${elapsed} ms`);
    assert.equal(app.fake.accepted.length, 51);
    // The 51st request reached SendGrid only after the pause.
    const ids = (res.body['results'] as Array<Record<string, unknown>>).map((r) => r['id']);
    assert.deepEqual(
      ids,
      Array.from({ length: 51 }, (_, i) => `item-${i}`),
    );
  });

  it('50 items are one batch: no delay even with a long batchDelay', async () => {
    const started = Date.now();
    // The longest delay allowed: one batch must not wait it even once (50 sends take far less).
    const res = await app.post('/api/email/bulk', { emails: items(50), batchDelay: 10_000 });
    assert.equal(res.status, 200);
    assert.equal(res.body['sent'], 50);
    assert.ok(Date.now() - started < 10_000);
  });

  it('the default batchDelay is 1000 ms', async () => {
    const started = Date.now();
    const res = await app.post('/api/email/bulk', { emails: items(51) });
    assert.equal(res.status, 200);
    assert.ok(Date.now() - started >= 1000);
  });

  it('auth: without all three headers only signup templates pass; a malformed header fails the request', async () => {
    const emails = [
      { id: 'w', ...welcomeBody() },
      { id: 'i', ...invoiceBody() },
    ];
    // As for send: the invoice needs an authenticated caller, so the request is 401 and nothing is sent.
    for (const headers of [{}, { 'x-user-id': AUTH['x-user-id'] }] as Array<Record<string, string>>) {
      const res = await app.post('/api/email/bulk', { emails, batchDelay: 0 }, headers);
      assert.equal(res.status, 401, JSON.stringify(headers));
      assert.deepEqual(res.body, { success: false, error: 'unauthorized' });
    }
    assert.equal(app.fake.accepted.length, 0);

    const signupOnly = await app.post('/api/email/bulk', { emails: [emails[0]], batchDelay: 0 }, {});
    assert.equal(signupOnly.status, 200, JSON.stringify(signupOnly.body));
    assert.equal(signupOnly.body['sent'], 1);
    assert.equal(app.fake.accepted.length, 1);

    const bad = await app.post(
      '/api/email/bulk',
      { emails: items(1) },
      { ...AUTH, 'x-organization-id': 'org-1' },
    );
    assert.equal(bad.status, 401);
    assert.deepEqual(bad.body, { success: false, error: 'unauthorized' });
  });

  it('auth: a malformed identity header is 401 before the body is read (it never comes here)', async () => {
    const { port } = new URL(app.url);
    const socket = connect(Number(port), '127.0.0.1');
    let answer = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
    socket.write(
      'POST /api/email/bulk HTTP/1.1\r\nHost: x\r\nX-User-Id: nobody\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{',
    );
    const started = Date.now();
    while (!answer.includes('\r\n\r\n') && Date.now() - started < 5000) await sleep(20);
    socket.destroy();
    assert.match(answer, /^HTTP\/1\.1 401 /, answer);
  });
});
