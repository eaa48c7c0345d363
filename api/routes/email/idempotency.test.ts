import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import type { EmailRecord } from '../../../core/email/records/record.ts';
import { AUTH, invoiceBody, useEmailApp } from '../../../test/support/email-app.ts';

/** Idempotency-Key on POST /api/email/send and /api/email/bulk, against the real database and a fake SendGrid. */
describe('Idempotency-Key on send and bulk', () => {
  const app = useEmailApp();
  const keyed = (key: string, headers: Record<string, string> = AUTH) => ({
    ...headers,
    'idempotency-key': key,
  });
  const newKey = () => `order-${randomUUID()}`;
  const stored = (emailId: string) =>
    app.database.db
      .collection<EmailRecord & { request_key_seen?: number }>('emails')
      .findOne({ _id: emailId });

  it('answers a repeated send with the first answer and calls the provider once', async () => {
    const key = newKey();
    const first = await app.post('/api/email/send', invoiceBody(), keyed(key));
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.headers.get('idempotent-replayed'), null);
    const second = await app.post('/api/email/send', invoiceBody(), keyed(key));
    assert.equal(second.status, 200);
    assert.deepEqual(second.body, first.body, 'same email_id, same provider_id');
    assert.equal(second.headers.get('idempotent-replayed'), 'true');
    assert.equal(app.fake.received.length, 1);

    const third = await app.post('/api/email/send', invoiceBody(), keyed(key));
    assert.deepEqual(third.body, first.body);
    const record = await stored(String(first.body['email_id']));
    assert.equal(record?.request_key, key);
    assert.equal(record?.request_key_seen, 3, 'the record counts every request that carried the key');
  });

  it('refuses the same key with a different body: 409, nothing sent', async () => {
    const key = newKey();
    assert.equal((await app.post('/api/email/send', invoiceBody(), keyed(key))).status, 200);
    const other = await app.post('/api/email/send', invoiceBody({ subject: 'Another' }), keyed(key));
    assert.equal(other.status, 409);
    assert.deepEqual(other.body, {
      success: false,
      error:
        'Idempotency-Key was already used with a different request body; use a new key for a new request.',
    });
    assert.equal(app.fake.received.length, 1);
  });

  it('sends once when two requests with one key arrive together: the second gets the first one’s answer', async () => {
    app.fake.delayMs = 400; // the first request is still at the provider when the second arrives
    const key = newKey();
    const [a, b] = await Promise.all([
      app.post('/api/email/send', invoiceBody(), keyed(key)),
      app.post('/api/email/send', invoiceBody(), keyed(key)),
    ]);
    assert.equal(a.status, 200, JSON.stringify(a.body));
    assert.equal(b.status, 200, JSON.stringify(b.body));
    assert.deepEqual(a.body, b.body);
    assert.equal(app.fake.received.length, 1);
  });

  it('scopes keys to the company: another company’s key of the same name is a new send', async () => {
    const key = newKey();
    const other = {
      'x-company-id': randomUUID(),
      'x-organization-id': randomUUID(),
      'x-user-id': randomUUID(),
    };
    const mine = await app.post('/api/email/send', invoiceBody(), keyed(key));
    const theirs = await app.post('/api/email/send', invoiceBody(), keyed(key, other));
    assert.equal(theirs.status, 200);
    assert.notEqual(theirs.body['email_id'], mine.body['email_id']);
    assert.equal(app.fake.received.length, 2);
  });

  it('replays a whole bulk, per-item ids and failures included, without sending again', async () => {
    const key = newKey();
    const body = {
      batchDelay: 0,
      emails: [
        invoiceBody({ id: 'one' }),
        invoiceBody({ id: 'two', to: 'not an address' }),
        invoiceBody({ id: 'three' }),
      ],
    };
    const first = await app.post('/api/email/bulk', body, keyed(key));
    assert.equal(first.status, 200);
    assert.equal(first.body['sent'], 2);
    const again = await app.post('/api/email/bulk', body, keyed(key));
    assert.deepEqual(again.body, first.body);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(app.fake.received.length, 2);
    const ids = (first.body['results'] as Array<{ id: string }>).map((r) => r.id);
    assert.deepEqual(ids, ['one', 'two', 'three']);
    // A key names one request: a send with a bulk's key is another body.
    assert.equal((await app.post('/api/email/send', invoiceBody(), keyed(key))).status, 409);
  });

  it('answers requests that waited on a first one that failed without sending with its failure: one provider call', async () => {
    app.fake.delayMs = 400; // the first request is still at the provider when the others arrive
    app.fake.plan(503);
    const key = newKey();
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => app.post('/api/email/send', invoiceBody(), keyed(key))),
    );
    app.fake.delayMs = 0;
    for (const answer of answers) {
      assert.equal(answer.status, 500, JSON.stringify(answer.body));
      assert.match(String(answer.body['error']), /^email provider unavailable: HTTP 503/);
    }
    assert.equal(app.fake.received.length, 1, 'the waiters did not call the provider');
    // The caller's retry after that answer runs again, and sends.
    const retried = await app.post('/api/email/send', invoiceBody(), keyed(key));
    assert.equal(retried.status, 200, JSON.stringify(retried.body));
    assert.equal(app.fake.received.length, 2);
  });

  it('keeps nothing for a request that sent nothing: the caller fixes it and retries with the same key', async () => {
    const key = newKey();
    const invalid = await app.post('/api/email/send', invoiceBody({ to: 'nobody' }), keyed(key));
    assert.equal(invalid.status, 400);
    const fixed = await app.post('/api/email/send', invoiceBody(), keyed(key));
    assert.equal(fixed.status, 200, 'validation failures are not stored');

    const outageKey = newKey();
    app.fake.plan(503);
    const down = await app.post('/api/email/send', invoiceBody(), keyed(outageKey));
    assert.equal(down.status, 500);
    const retried = await app.post('/api/email/send', invoiceBody(), keyed(outageKey));
    assert.equal(retried.status, 200, 'a provider 5xx sent nothing: the retry sends');
    assert.equal(app.fake.accepted.length, 2);
  });

  it('answers a provider rejection again instead of resending', async () => {
    const key = newKey();
    app.fake.plan(400);
    const rejected = await app.post('/api/email/send', invoiceBody(), keyed(key));
    assert.equal(rejected.status, 500);
    const again = await app.post('/api/email/send', invoiceBody(), keyed(key));
    assert.deepEqual([again.status, again.body], [rejected.status, rejected.body]);
    assert.equal(app.fake.received.length, 1);
    // Marked like a replayed success: the caller can tell the provider was not asked again.
    assert.equal(rejected.headers.get('idempotent-replayed'), null);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
  });

  it('forgets a key after 24 hours: the same key then sends anew', async () => {
    const key = newKey();
    const first = await app.post('/api/email/send', invoiceBody(), keyed(key));
    const requests = app.database.db.collection<{ _id: string; expires_at: Date }>('email_requests');
    const doc = await requests.findOne({ _id: `${AUTH['x-company-id']}/${key}` });
    assert.ok(doc, 'the key is stored under the company');
    assert.ok(doc.expires_at.getTime() - Date.now() > 23.9 * 3600 * 1000, 'kept for 24 hours');
    await requests.updateOne({ _id: doc._id }, { $set: { expires_at: new Date(Date.now() - 1000) } });
    const later = await app.post('/api/email/send', invoiceBody(), keyed(key));
    assert.equal(later.status, 200);
    assert.notEqual(later.body['email_id'], first.body['email_id']);
    assert.equal(app.fake.received.length, 2);
  });

  it('refuses malformed keys and keys without an authenticated company with 400', async () => {
    const tooLong = await app.post('/api/email/send', invoiceBody(), keyed('k'.repeat(256)));
    assert.deepEqual(tooLong.body, {
      success: false,
      error: 'Idempotency-Key must be one header of 1 to 255 printable ASCII characters.',
    });
    // Sent, but empty: not the same as no key (the send would go out unprotected).
    const empty = await app.post('/api/email/send', invoiceBody(), keyed(''));
    assert.equal(empty.status, 400);
    assert.deepEqual(empty.body, {
      success: false,
      error: 'Idempotency-Key must be one header of 1 to 255 printable ASCII characters.',
    });
    assert.equal(app.fake.received.length, 0);
    // A UTF-8 `é` reaches Node as the latin1 characters of its bytes: not kept as sent, refused.
    const accented = await app.post(
      '/api/email/send',
      invoiceBody(),
      keyed(Buffer.from('clé-1', 'utf8').toString('latin1')),
    );
    assert.equal(accented.status, 400);
    assert.deepEqual(accented.body, {
      success: false,
      error: 'Idempotency-Key must be one header of 1 to 255 printable ASCII characters.',
    });
    // Two headers: Node would join them into `a, b`, a key nobody sent.
    const twice = await postWithRawHeaders(app.url, '/api/email/send', invoiceBody(), [
      ...Object.entries(AUTH).flat(),
      'Idempotency-Key',
      'order-a',
      'Idempotency-Key',
      'order-b',
    ]);
    assert.equal(twice.status, 400, twice.body);
    assert.deepEqual(JSON.parse(twice.body), {
      success: false,
      error: 'Idempotency-Key must be one header of 1 to 255 printable ASCII characters.',
    });
    assert.equal(app.fake.received.length, 0);
    const anonymous = await app.post(
      '/api/email/send',
      {
        to: 'new.user@example.com',
        subject: 'Welcome',
        template_id: 'welcome',
        template_data: {
          USER_NAME: 'New',
          LOGIN_URL: 'https://app.example/login',
          SUPPORT_EMAIL: 'help@example.com',
        },
      },
      { 'idempotency-key': newKey() },
    );
    assert.equal(anonymous.status, 400, JSON.stringify(anonymous.body));
    assert.match(String(anonymous.body['error']), /Idempotency-Key needs an authenticated caller/);
    assert.equal(app.fake.received.length, 0);
  });
});

/** A POST with its headers given as raw pairs (a repeated name sent twice, as `fetch` cannot). */
function postWithRawHeaders(
  base: string,
  path: string,
  body: unknown,
  headers: string[],
): Promise<{ status: number; body: string }> {
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, base),
      {
        method: 'POST',
        // As an array the headers go as given: Host too (Node answers 400 without one).
        headers: [
          'Host',
          new URL(base).host,
          ...headers,
          'Content-Type',
          'application/json',
          'Content-Length',
          String(payload.length),
        ],
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
