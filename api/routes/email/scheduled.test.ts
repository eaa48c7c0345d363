import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { scheduledRunId } from '../../../core/workflows/scheduled-send.ts';
import { invoiceBody, welcomeBody } from '../../../test/support/sample-emails.ts';
import { WorkflowHarness } from '../../../test/support/workflow-harness.ts';

/**
 * `send_at` on POST /api/email/send and /bulk, GET /api/email/scheduled and
 * DELETE /api/email/scheduled/{id}, against a real gateway, Temporal server
 * and worker (the runs they start must exist and be cancellable).
 */
const h = new WorkflowHarness();
const organizationId = randomUUID();
const own = { 'x-organization-id': organizationId };
before(async () => {
  await h.start();
  await h.startWorker();
});
after(() => h.stop());

const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();
const DAY = 24 * 60 * 60 * 1000;
const send = (body: unknown, headers: Record<string, string> = own) =>
  h.request('POST', '/api/email/send', body, headers);
const acceptedFor = (address: string) =>
  h.fake.accepted.filter((m) => m.body.personalizations[0]?.to[0]?.email === address).length;

describe('POST /api/email/send with send_at', () => {
  const refused: Array<[string, unknown, string]> = [
    ['in the past', new Date(Date.now() - 60_000).toISOString(), 'send_at must be in the future.'],
    ['more than 30 days ahead', inMs(30 * DAY + 60_000), 'send_at must be at most 30 days ahead.'],
    ['without an offset', '2030-01-31T09:00:00', 'send_at must be an RFC 3339 timestamp'],
    ['a date alone', '2030-01-31', 'send_at must be an RFC 3339 timestamp'],
    ['February 30th', '2030-02-30T09:00:00Z', 'send_at must be an RFC 3339 timestamp'],
    ['a number', Date.now() + 60_000, 'send_at must be an RFC 3339 timestamp'],
    ['null', null, 'send_at must be an RFC 3339 timestamp'],
  ];
  for (const [what, sendAt, message] of refused) {
    it(`refuses send_at ${what}: 400, nothing recorded`, async () => {
      const to = `refused-${randomUUID()}@example.com`;
      const res = await send(invoiceBody({ to, send_at: sendAt }));
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body['success'], false);
      assert.ok(String(res.body['error']).startsWith(message), String(res.body['error']));
      assert.equal(await h.database.db.collection('emails').countDocuments({ recipient_email: to }), 0);
    });
  }

  it('accepts an offset other than Z and answers send_at in UTC', async () => {
    const at = new Date(Date.now() + DAY);
    at.setUTCMilliseconds(0);
    const local = new Date(at.getTime() + 2 * 3600_000).toISOString().replace('Z', '+02:00');
    const res = await send(invoiceBody({ to: `offset-${randomUUID()}@example.com`, send_at: local }));
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body['send_at'], at.toISOString());
    await h.request('DELETE', `/api/email/scheduled/${String(res.body['email_id'])}`, undefined, own);
  });

  it('validates the rest of the body now, with the usual messages', async () => {
    const res = await send(invoiceBody({ template_data: {}, send_at: inMs(DAY) }));
    assert.equal(res.status, 400);
    assert.match(String(res.body['error']), /^missing required fields: /);
    const blocked = await send(invoiceBody({ to: 'x@blocked.example', send_at: inMs(DAY) }));
    assert.equal(blocked.status, 400);
    assert.deepEqual(blocked.body, { success: false, error: 'emails to this domain are not allowed.' });
  });

  it('needs an authenticated caller with all three ids, even for a signup template: 401', async () => {
    const res = await send(welcomeBody({ send_at: inMs(DAY) }), {
      'x-company-id': '',
      'x-organization-id': '',
      'x-user-id': randomUUID(),
    });
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, { success: false, error: 'unauthorized' });
  });

  it('Idempotency-Key: the same request again gets the same email_id, one record, one run', async () => {
    const to = `idem-${randomUUID()}@example.com`;
    const body = invoiceBody({ to, send_at: inMs(DAY) });
    const key = { ...own, 'idempotency-key': randomUUID() };
    const first = await send(body, key);
    const second = await send(body, key);
    assert.equal(first.status, 200);
    assert.equal(second.status, 200);
    assert.equal(second.headers.get('idempotent-replayed'), 'true');
    assert.equal(second.body['email_id'], first.body['email_id']);
    assert.equal(await h.database.db.collection('emails').countDocuments({ recipient_email: to }), 1);
    const emailId = String(first.body['email_id']);
    const run = await h.temporal.workflow.getHandle(scheduledRunId(emailId)).describe();
    assert.equal(run.status.name, 'RUNNING');
    await h.request('DELETE', `/api/email/scheduled/${emailId}`, undefined, own);
  });
});

describe('POST /api/email/bulk with send_at per item', () => {
  it('schedules the items that have it, sends the others now; each is sent once', async () => {
    const now = `bulk-now-${randomUUID()}@example.com`;
    const later = `bulk-later-${randomUUID()}@example.com`;
    const sendAt = inMs(2500);
    const res = await h.request(
      'POST',
      '/api/email/bulk',
      {
        emails: [
          { id: 'a', ...invoiceBody({ to: now }) },
          { id: 'b', ...invoiceBody({ to: later, send_at: sendAt }) },
          { id: 'c', ...invoiceBody({ to: later, send_at: 'tomorrow' }) },
        ],
        batchDelay: 0,
      },
      own,
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const [a, b, c] = res.body['results'] as Array<Record<string, unknown>>;
    assert.equal(a?.['success'], true);
    assert.equal(a?.['scheduled'], undefined);
    assert.deepEqual(
      { success: b?.['success'], scheduled: b?.['scheduled'], send_at: b?.['send_at'] },
      { success: true, scheduled: true, send_at: sendAt },
    );
    assert.equal(c?.['success'], false);
    assert.match(String(c?.['error']), /^send_at must be an RFC 3339 timestamp/);
    assert.equal(acceptedFor(now), 1);
    assert.equal(acceptedFor(later), 0);

    await h.temporal.workflow.getHandle(scheduledRunId(String(b?.['email_id']))).result();
    assert.equal(acceptedFor(later), 1);
  });
});

describe('GET /api/email/scheduled', () => {
  const company = {
    'x-company-id': randomUUID(),
    'x-organization-id': randomUUID(),
    'x-user-id': randomUUID(),
  };

  it("lists the company's pending scheduled emails by send_at, a page at a time", async () => {
    const ids: string[] = [];
    for (const days of [3, 1, 2]) {
      const res = await send(
        invoiceBody({ to: `list-${days}@example.com`, send_at: inMs(days * DAY) }),
        company,
      );
      assert.equal(res.status, 200);
      ids[days - 1] = String(res.body['email_id']);
    }
    const first = await h.request('GET', '/api/email/scheduled?limit=2', undefined, company);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const page1 = first.body['data'] as Array<Record<string, unknown>>;
    assert.deepEqual(
      page1.map((e) => e['email_id']),
      ids.slice(0, 2),
    );
    assert.equal(page1[0]?.['status'], 'pending');
    assert.equal(page1[0]?.['recipient_email'], 'list-1@example.com');
    const cursor = String(first.body['nextCursor']);

    const second = await h.request(
      'GET',
      `/api/email/scheduled?limit=2&cursor=${cursor}`,
      undefined,
      company,
    );
    assert.deepEqual(
      (second.body['data'] as Array<Record<string, unknown>>).map((e) => e['email_id']),
      ids.slice(2),
    );
    assert.equal(second.body['nextCursor'], null);

    // A cancelled one leaves the list.
    await h.request('DELETE', `/api/email/scheduled/${ids[0]}`, undefined, company);
    const after = await h.request('GET', '/api/email/scheduled', undefined, company);
    assert.deepEqual(
      (after.body['data'] as Array<Record<string, unknown>>).map((e) => e['email_id']),
      ids.slice(1),
    );

    // Another company sees none of them, and cannot use this company's cursor.
    const stranger = { 'x-company-id': randomUUID(), 'x-user-id': randomUUID() };
    const theirs = await h.request('GET', '/api/email/scheduled', undefined, stranger);
    assert.deepEqual(theirs.body['data'], []);
    const stolen = await h.request('GET', `/api/email/scheduled?cursor=${cursor}`, undefined, stranger);
    assert.equal(stolen.status, 400);
    assert.deepEqual(stolen.body, { success: false, error: 'cursor is invalid' });
    for (const id of ids.slice(1))
      await h.request('DELETE', `/api/email/scheduled/${id}`, undefined, company);
  });

  it('refuses a tampered cursor and a limit out of range: 400', async () => {
    const bad = await h.request('GET', '/api/email/scheduled?cursor=abc.def', undefined, company);
    assert.equal(bad.status, 400);
    const limit = await h.request('GET', '/api/email/scheduled?limit=101', undefined, company);
    assert.equal(limit.status, 400);
  });
});

describe('DELETE /api/email/scheduled/{email_id}', () => {
  it('an unknown, malformed or not scheduled email is 404', async () => {
    const sent = await send(invoiceBody({ to: `now-${randomUUID()}@example.com` }));
    assert.equal(sent.status, 200);
    for (const id of [randomUUID(), 'not-an-id', String(sent.body['email_id'])]) {
      const res = await h.request('DELETE', `/api/email/scheduled/${id}`, undefined, own);
      assert.equal(res.status, 404, id);
      assert.deepEqual(res.body, { success: false, error: 'scheduled email not found.' });
    }
  });
});

describe('scheduled sends with test-mode keys (AUTH_MODE=api-key)', () => {
  const t = new WorkflowHarness();
  const company = randomUUID();
  const identity = { 'x-company-id': company, 'x-organization-id': randomUUID(), 'x-user-id': randomUUID() };
  before(async () => {
    await t.start({ AUTH_MODE: 'api-key' });
    await t.startWorker();
  });
  after(() => t.stop());
  const bearer = async (test: boolean) => ({
    ...identity,
    authorization: `Bearer ${
      (
        await t.keys.create({
          companyId: company,
          organizationId: identity['x-organization-id'],
          name: 'k',
          scopes: ['email:send', 'email:read'],
          test,
        })
      ).plaintext
    }`,
  });

  it('a test key schedules a test send: sent at send_at, never to the provider, invisible to live keys', async () => {
    const [testKey, liveKey] = [await bearer(true), await bearer(false)];
    const to = `test-mode-${randomUUID()}@example.com`;
    const res = await t.request('POST', '/api/email/send', invoiceBody({ to, send_at: inMs(1500) }), testKey);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const emailId = String(res.body['email_id']);
    const live = await t.request('GET', '/api/email/scheduled', undefined, liveKey);
    assert.deepEqual(live.body['data'], []);
    const listed = await t.request('GET', '/api/email/scheduled', undefined, testKey);
    assert.deepEqual(
      (listed.body['data'] as Array<Record<string, unknown>>).map((e) => e['email_id']),
      [emailId],
    );
    const foreign = await t.request('DELETE', `/api/email/scheduled/${emailId}`, undefined, liveKey);
    assert.equal(foreign.status, 404);

    const outcome = (await t.temporal.workflow.getHandle(scheduledRunId(emailId)).result()) as Record<
      string,
      unknown
    >;
    assert.equal(outcome['status'], 'sent');
    assert.equal(t.fake.received.length, 0);
    const status = await t.request('GET', `/api/email/status/${emailId}`, undefined, testKey);
    assert.equal((status.body['data'] as Record<string, unknown>)['status'], 'sent');
  });
});

describe('the bound on pending scheduled emails (SCHEDULED_MAX_PENDING)', () => {
  const b = new WorkflowHarness();
  const company = {
    'x-company-id': randomUUID(),
    'x-organization-id': randomUUID(),
    'x-user-id': randomUUID(),
  };
  before(() => b.start({ SCHEDULED_MAX_PENDING: '2' }));
  after(() => b.stop());
  const TOO_MANY =
    'too many scheduled emails pending for this company. maximum is 2; cancel some or wait until they are sent.';

  it('a send past it is 409; a bulk item past it fails alone; a cancel makes room', async () => {
    const schedule = () =>
      b.request(
        'POST',
        '/api/email/send',
        invoiceBody({ to: `bound-${randomUUID()}@example.com`, send_at: inMs(DAY) }),
        company,
      );
    const first = await schedule();
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const bulk = await b.request(
      'POST',
      '/api/email/bulk',
      {
        emails: ['x', 'y'].map((id) => ({
          id,
          ...invoiceBody({ to: `bound-${id}-${randomUUID()}@example.com`, send_at: inMs(DAY) }),
        })),
        batchDelay: 0,
      },
      company,
    );
    assert.equal(bulk.status, 200, JSON.stringify(bulk.body));
    const outcomes = (bulk.body['results'] as Array<Record<string, unknown>>).map((r) => r['error'] ?? 'ok');
    assert.deepEqual(outcomes.sort(), ['ok', TOO_MANY]);

    const over = await schedule();
    assert.equal(over.status, 409);
    assert.deepEqual(over.body, { success: false, error: TOO_MANY });
    // Another company is not held back.
    const other = await b.request(
      'POST',
      '/api/email/send',
      invoiceBody({ to: `bound-other-${randomUUID()}@example.com`, send_at: inMs(DAY) }),
      { ...company, 'x-company-id': randomUUID() },
    );
    assert.equal(other.status, 200, JSON.stringify(other.body));

    const cancelled = await b.request(
      'DELETE',
      `/api/email/scheduled/${String(first.body['email_id'])}`,
      undefined,
      company,
    );
    assert.equal(cancelled.status, 200);
    assert.equal((await schedule()).status, 200);
  });
});
