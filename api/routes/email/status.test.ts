import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { AUTH, COMPANY, invoiceBody, useEmailApp, welcomeBody } from '../../../test/support/email-app.ts';

/** The interface's status fields, plus `provider` (which provider took the message, with failover). */
const STATUS_FIELDS = [
  'created_at',
  'delivered',
  'email_id',
  'opened',
  'provider',
  'recipient_email',
  'recipient_name',
  'resource_id_ref',
  'resource_type_ref',
  'status',
  'subject',
  'template_id',
];

describe('GET /api/email/status/:email_id', () => {
  const app = useEmailApp();
  let emailId: string;
  before(async () => {
    const res = await app.post(
      '/api/email/send',
      invoiceBody({
        to: { email: 'jane@example.com', name: 'Jane Doe' },
        resource_type_ref: 'invoice',
        resource_id_ref: '42',
      }),
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    emailId = String(res.body['email_id']);
  });

  it('returns exactly the interface’s status fields and the provider (never view_key)', async () => {
    const res = await app.get(`/api/email/status/${emailId}`);
    assert.equal(res.status, 200);
    assert.equal(res.body['success'], true);
    const data = res.body['data'] as Record<string, unknown>;
    assert.deepEqual(Object.keys(data).sort(), STATUS_FIELDS);
    assert.equal(data['email_id'], emailId);
    assert.equal(data['subject'], 'Your invoice INV-1');
    assert.equal(data['recipient_email'], 'jane@example.com');
    assert.equal(data['recipient_name'], 'Jane Doe');
    assert.equal(data['status'], 'sent');
    assert.equal(data['template_id'], 'invoice');
    assert.equal(data['opened'], false);
    assert.equal(data['delivered'], false);
    assert.equal(data['resource_type_ref'], 'invoice');
    assert.equal(data['resource_id_ref'], '42');
    assert.equal(data['provider'], 'sendgrid');
    assert.ok(!Number.isNaN(Date.parse(String(data['created_at']))));
    assert.ok(Math.abs(Date.now() - Date.parse(String(data['created_at']))) < 60_000);
  });

  it('a failed email says why (error); other statuses carry no error', async () => {
    app.fake.plan(400); // the provider refuses the next message
    const refused = await app.post('/api/email/send', invoiceBody());
    assert.equal(refused.status, 500);
    const failedId = (await app.database.db
      .collection<{ _id: string }>('emails')
      .find({ status_rank: 5 } as never)
      .sort({ created_at: -1 })
      .limit(1)
      .next())!._id;
    const failed = (await app.get(`/api/email/status/${failedId}`)).body['data'] as Record<string, unknown>;
    assert.equal(failed['status'], 'failed');
    assert.equal(failed['error'], refused.body['error']);
    assert.match(String(failed['error']), /provider rejected/);
    const sent = (await app.get(`/api/email/status/${emailId}`)).body['data'] as Record<string, unknown>;
    assert.equal('error' in sent, false);
  });

  it('another company gets 404 email not found.', async () => {
    const res = await app.get(`/api/email/status/${emailId}`, { ...AUTH, 'x-company-id': randomUUID() });
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { success: false, error: 'email not found.' });
  });

  it('another user of the same company sees it', async () => {
    const res = await app.get(`/api/email/status/${emailId}`, {
      'x-company-id': COMPANY,
      'x-user-id': randomUUID(),
    });
    assert.equal(res.status, 200);
    assert.equal((res.body['data'] as Record<string, unknown>)['email_id'], emailId);
  });

  it('the sender sees its own email with X-User-Id alone (the interface’s example request)', async () => {
    const res = await app.get(`/api/email/status/${emailId}`, { 'x-user-id': AUTH['x-user-id'] });
    assert.equal(res.status, 200);
    assert.equal((res.body['data'] as Record<string, unknown>)['email_id'], emailId);
  });

  it('another user id alone does not see a company’s email', async () => {
    const res = await app.get(`/api/email/status/${emailId}`, { 'x-user-id': randomUUID() });
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { success: false, error: 'email not found.' });
  });

  it('the sender naming another company does not see it', async () => {
    const res = await app.get(`/api/email/status/${emailId}`, {
      'x-user-id': AUTH['x-user-id'],
      'x-company-id': randomUUID(),
    });
    assert.equal(res.status, 404);
  });

  it('an unauthenticated send is visible only to the same user id', async () => {
    const user = randomUUID();
    const sent = await app.post('/api/email/send', welcomeBody(), { 'x-user-id': user });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    const id = String(sent.body['email_id']);
    assert.equal((await app.get(`/api/email/status/${id}`, { 'x-user-id': user })).status, 200);
    assert.equal((await app.get(`/api/email/status/${id}`, { 'x-user-id': randomUUID() })).status, 404);
    assert.equal((await app.get(`/api/email/status/${id}`, AUTH)).status, 404);

    // Naming a company without the other ids is still unauthenticated: the
    // record is no company's, so another user of that company does not see it.
    const partial = await app.post('/api/email/send', welcomeBody(), {
      'x-user-id': user,
      'x-company-id': COMPANY,
    });
    assert.equal(partial.status, 200, JSON.stringify(partial.body));
    const partialId = String(partial.body['email_id']);
    assert.equal((await app.get(`/api/email/status/${partialId}`, AUTH)).status, 404);
    assert.equal((await app.get(`/api/email/status/${partialId}`, { 'x-user-id': user })).status, 200);

    // Sent with no headers at all: nobody can read it.
    const anonymous = await app.post('/api/email/send', welcomeBody(), {});
    assert.equal(anonymous.status, 200);
    assert.equal(
      (await app.get(`/api/email/status/${String(anonymous.body['email_id'])}`, { 'x-user-id': user }))
        .status,
      404,
    );
  });

  it('unknown and malformed ids → 404 email not found.', async () => {
    for (const id of [randomUUID(), 'not-a-uuid', '1']) {
      const res = await app.get(`/api/email/status/${id}`);
      assert.equal(res.status, 404, id);
      assert.deepEqual(res.body, { success: false, error: 'email not found.' });
    }
  });

  it('401 unauthorized without a UUID X-User-Id', async () => {
    const variants: Array<Record<string, string>> = [{}, { 'x-company-id': COMPANY }, { 'x-user-id': 'bob' }];
    for (const headers of variants) {
      const res = await app.get(`/api/email/status/${emailId}`, headers);
      assert.equal(res.status, 401, JSON.stringify(headers));
      assert.deepEqual(res.body, { success: false, error: 'unauthorized' });
    }
  });
});
