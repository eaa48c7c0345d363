/**
 * Both workflows end to end through HTTP: a real gateway, the real Temporal
 * server, in-process workers running the real activities and email core over
 * a real MongoDB-protocol database, and a fake SendGrid over real HTTP.
 * Every run status is observed for real.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ObjectId } from 'mongodb';
import { WorkflowHarness } from './support/workflow-harness.ts';
import { until } from './support/until.ts';
import { authenticatedAs } from '../core/identity.ts';
import { createSuppressionStore } from '../core/email/suppressions/suppression-store.ts';
import { COMPANY_ID, USER_ID } from '../core/workflows/search-attributes.ts';

const h = new WorkflowHarness();
before(async () => {
  await h.start();
  await h.startWorker();
});
after(() => h.stop());

/** The EIN identity: the harness's caller (runs act as whoever triggers them). */
const ids = () => ({
  userId: h.caller.userId,
  companyId: h.caller.companyId,
  organizationId: h.caller.organizationId,
});

async function newUser(fields: { welcomeEmailSent?: boolean; name?: string } = {}) {
  const _id = `user-${randomUUID()}`;
  await h.insertUser({ _id, email: `${_id}@example.com`, name: 'Ada Lovelace', ...fields });
  return _id;
}

function users() {
  return h.database.db.collection<{ _id: string; welcomeEmailSent?: boolean; welcomeEmailSentAt?: Date }>(
    'users',
  );
}

describe('send-welcome-email', () => {
  it('sends the welcome email once, flags the user and completes with result.result', async () => {
    h.fake.reset();
    const userId = await newUser();
    const started = await h.trigger('send-welcome-email', { userId });
    assert.equal(started.status, 202);
    assert.equal(started.body['success'], true);
    assert.equal(started.body['workflowName'], 'send-welcome-email');
    const runId = started.body['runId'] as string;
    assert.match(runId, /^send-welcome-email-[0-9a-f-]{36}$/);

    const run = await h.waitForStatus('send-welcome-email', runId, 'completed');
    assert.equal(run.success, true);
    assert.equal(run.runId, runId);
    assert.equal(run.error, null);
    assert.equal(run.result?.result['message'], 'welcome email sent');
    assert.equal(run.result?.result['userId'], userId);
    assert.ok(Date.parse(run.createdAt) <= Date.parse(run.updatedAt));

    assert.equal(h.fake.accepted.length, 1);
    const mail = h.fake.accepted[0]!.body;
    assert.equal(mail.personalizations[0]!.to[0]!.email, `${userId}@example.com`);
    const html = mail.content.find((c) => c.type === 'text/html')?.value ?? '';
    assert.match(html, /Ada Lovelace/);
    assert.match(html, new RegExp(h.config.loginUrl.replace(/[/.]/g, '\\$&')));

    const user = await users().findOne({ _id: userId });
    assert.equal(user?.welcomeEmailSent, true);
    assert.ok(user?.welcomeEmailSentAt instanceof Date);

    // The email the run sent is a normal record of the email service.
    const email = await h.emailTo(`${userId}@example.com`);
    assert.equal(email?.email_id, run.result?.result['emailId']);
    assert.equal(email?.status, 'sent');
    assert.equal(email?.template_id, 'welcome');
  });

  it('two runs for the same user started together send one email between them', async () => {
    h.fake.reset();
    h.fake.delayMs = 1500; // hold the first run's send so the second one overlaps it
    const userId = await newUser();
    const first = await h.trigger('send-welcome-email', { userId });
    await h.waitForStatus('send-welcome-email', first.body['runId'] as string, 'running');
    // The first run's email is recorded (pending at the provider) before the second run starts.
    await until("the first run's email record", () => h.emailTo(`${userId}@example.com`), 10_000);
    const second = await h.trigger('send-welcome-email', { userId });
    const secondRun = await h.waitForStatus(
      'send-welcome-email',
      second.body['runId'] as string,
      'completed',
    );
    assert.equal(secondRun.result?.result['message'], 'welcome email already in progress');
    const firstRun = await h.waitForStatus('send-welcome-email', first.body['runId'] as string, 'completed');
    assert.equal(firstRun.result?.result['message'], 'welcome email sent');
    assert.equal(h.fake.accepted.length, 1);
    const user = await users().findOne({ _id: userId });
    assert.equal(user?.welcomeEmailSent, true);
    assert.equal((user as Record<string, unknown> | null)?.['welcomeEmailRunId'], undefined, 'claim cleared');
    h.fake.reset();
  });

  it('finds a user whose _id is an ObjectId by its 24-hex id', async () => {
    h.fake.reset();
    const _id = new ObjectId();
    await h.database.db.collection('users').insertOne({ _id, email: 'oid@example.com', name: 'Oid' });
    const { body } = await h.trigger('send-welcome-email', { userId: _id.toHexString() });
    const run = await h.waitForStatus('send-welcome-email', body['runId'] as string, 'completed');
    assert.equal(run.result?.result['message'], 'welcome email sent');
    assert.equal(h.fake.accepted[0]?.body.personalizations[0]?.to[0]?.email, 'oid@example.com');
    const user = await h.database.db.collection('users').findOne({ _id });
    assert.equal(user?.['welcomeEmailSent'], true);
  });

  it('completes without a second email when the flag is already set', async () => {
    h.fake.reset();
    const userId = await newUser({ welcomeEmailSent: true });
    const { body } = await h.trigger('send-welcome-email', { userId });
    const run = await h.waitForStatus('send-welcome-email', body['runId'] as string, 'completed');
    assert.equal(run.result?.result['message'], 'welcome email already sent');
    assert.equal(h.fake.received.length, 0);
  });

  it('fails with "user not found: <id>" for an unknown user, without retries', async () => {
    h.fake.reset();
    const userId = `missing-${randomUUID()}`;
    const { body } = await h.trigger('send-welcome-email', { userId });
    const started = Date.now();
    const run = await h.waitForStatus('send-welcome-email', body['runId'] as string, 'failed');
    assert.equal(run.error, `user not found: ${userId}`);
    assert.equal('result' in run, false);
    // A retried step would have waited at least the 1s initial backoff.
    assert.ok(Date.now() - started < 5000);
    assert.equal(h.fake.received.length, 0);
  });

  it('a caller of company A gets "user not found" for a user of company B, exactly like an unknown user', async () => {
    h.fake.reset();
    const companyB = randomUUID();
    const userId = `user-${randomUUID()}`;
    await h.database.db.collection('users').insertOne({
      _id: userId as never,
      email: 'b-user@example.com',
      name: 'Bea of B',
      companyId: companyB,
    });
    const { body } = await h.trigger('send-welcome-email', { userId });
    const run = await h.waitForStatus('send-welcome-email', body['runId'] as string, 'failed');
    const unknownId = `missing-${randomUUID()}`;
    const unknown = await h.trigger('send-welcome-email', { userId: unknownId });
    const unknownRun = await h.waitForStatus('send-welcome-email', unknown.body['runId'] as string, 'failed');
    assert.equal(run.error, `user not found: ${userId}`);
    assert.equal(unknownRun.error, `user not found: ${unknownId}`);
    assert.deepEqual(Object.keys(run).sort(), Object.keys(unknownRun).sort());
    assert.equal('result' in run, false);
    assert.doesNotMatch(JSON.stringify(run), /b-user@example\.com|Bea of B/);
    assert.equal(h.fake.received.length, 0, 'nothing sent to B’s user');
    const user = await h.database.db.collection('users').findOne({ _id: userId as never });
    assert.equal(user?.['welcomeEmailSent'], undefined, 'B’s flag untouched');
    assert.equal(user?.['welcomeEmailRunId'], undefined, 'and never claimed');

    // B's own runs reach B's user (the id compared case-insensitively).
    const asB = {
      'x-company-id': companyB.toUpperCase(),
      'x-organization-id': randomUUID(),
      'x-user-id': randomUUID(),
    };
    const own = await h.trigger('send-welcome-email', { userId }, asB);
    const ownRun = await h.waitForStatus(
      'send-welcome-email',
      own.body['runId'] as string,
      'completed',
      20_000,
      asB,
    );
    assert.equal(ownRun.result?.result['message'], 'welcome email sent');
    assert.equal(h.fake.accepted[0]?.body.personalizations[0]?.to[0]?.email, 'b-user@example.com');
  });

  it('retries a provider that fails twice (503, 503), then completes with one accepted email', async () => {
    h.fake.reset();
    h.fake.plan(503, 503);
    const userId = await newUser();
    const { body } = await h.trigger('send-welcome-email', { userId });
    const run = await h.waitForStatus('send-welcome-email', body['runId'] as string, 'completed', 30_000);
    assert.equal(run.result?.result['message'], 'welcome email sent');
    assert.equal(h.fake.received.length, 3);
    assert.equal(h.fake.accepted.length, 1);
    const email = await h.emailTo(`${userId}@example.com`);
    assert.equal(email?.email_id, run.result?.result['emailId']);
    assert.equal(email?.status, 'sent');
  });

  it('a run taking over the claim of a run whose last step failed for good sends no second email', async () => {
    h.fake.reset();
    const userId = await newUser();
    const first = await h.trigger('send-welcome-email', { userId });
    const firstRunId = first.body['runId'] as string;
    const done = await h.waitForStatus('send-welcome-email', firstRunId, 'completed');
    // What a run whose flag step failed for good leaves behind: the email sent,
    // no flag, its claim never released, abandoned past the takeover delay.
    await h.database.db.collection('users').updateOne(
      { _id: userId as never },
      {
        $unset: { welcomeEmailSent: '', welcomeEmailSentAt: '' },
        $set: { welcomeEmailRunId: firstRunId, welcomeEmailClaimedAt: new Date(Date.now() - 16 * 60_000) },
      },
    );

    const second = await h.trigger('send-welcome-email', { userId });
    const run = await h.waitForStatus('send-welcome-email', second.body['runId'] as string, 'completed');
    assert.equal(run.result?.result['message'], 'welcome email sent');
    assert.equal(run.result?.result['emailId'], done.result?.result['emailId'], 'the same email, answered');
    assert.equal(h.fake.received.length, 1, 'one email in all');
    assert.equal((await users().findOne({ _id: userId }))?.welcomeEmailSent, true);
  });

  it('fails on a provider 4xx after exactly one request, and the record is failed', async () => {
    h.fake.reset();
    h.fake.plan(400);
    const userId = await newUser();
    const { body } = await h.trigger('send-welcome-email', { userId });
    const run = await h.waitForStatus('send-welcome-email', body['runId'] as string, 'failed');
    assert.match(run.error ?? '', /sender identity|rejected|400/i);
    assert.equal(h.fake.received.length, 1);
    const user = await users().findOne({ _id: userId });
    assert.notEqual(user?.welcomeEmailSent, true);
    const email = await h.emailTo(`${userId}@example.com`);
    assert.equal(email?.status, 'failed');

    // The failed run released its claim: once the provider accepts again, a new run sends.
    const retry = await h.trigger('send-welcome-email', { userId });
    const ok = await h.waitForStatus('send-welcome-email', retry.body['runId'] as string, 'completed');
    assert.equal(ok.result?.result['message'], 'welcome email sent');
    assert.equal(h.fake.accepted.length, 1);
  });
  it('fails without sending when the user’s address is on the company’s suppression list', async () => {
    h.fake.reset();
    const userId = await newUser();
    await createSuppressionStore(h.database.db).add({
      company_id: h.caller.companyId,
      email: `${userId}@example.com`,
      reason: 'unsubscribe',
      source: 'api',
      detail: null,
      email_id: null,
    });
    const { body } = await h.trigger('send-welcome-email', { userId });
    const run = await h.waitForStatus('send-welcome-email', body['runId'] as string, 'failed');
    assert.equal(
      run.error,
      `all recipients are suppressed: ${userId}@example.com (unsubscribe). nothing was sent.`,
    );
    assert.equal(h.fake.received.length, 0);
    assert.equal((await h.emailTo(`${userId}@example.com`))?.status, 'failed');
    assert.notEqual((await users().findOne({ _id: userId }))?.welcomeEmailSent, true);
  });
});

describe('send-email-received-ein', () => {
  for (const [spelling, makeBody] of [
    [
      'camelCase',
      (id: ReturnType<typeof ids>) => ({
        ...id,
        emailAction: 'ein-received',
        recipientName: 'Grace',
        recipients: ['owner@example.com'],
        ccs: ['cfo@example.com'],
        resource_id_ref: 'ein-123',
      }),
    ],
    [
      'snake_case',
      (id: ReturnType<typeof ids>) => ({
        user_id: id.userId,
        company_id: id.companyId,
        organization_id: id.organizationId,
        email_action: 'ein-received',
        recipient_name: 'Grace',
        recipients: ['owner@example.com'],
        ccs: ['cfo@example.com'],
        resource_id_ref: 'ein-123',
      }),
    ],
  ] as const) {
    it(`sends the ein-received email (${spelling} keys) and completes`, async () => {
      h.fake.reset();
      const id = ids();
      const { status, body } = await h.trigger('send-email-received-ein', makeBody(id));
      assert.equal(status, 202);
      const run = await h.waitForStatus('send-email-received-ein', body['runId'] as string, 'completed');
      assert.equal(run.result?.result['message'], 'ein email sent');
      assert.equal(h.fake.accepted.length, 1);
      const mail = h.fake.accepted[0]!.body;
      assert.deepEqual(mail.personalizations[0]!.to, [{ email: 'owner@example.com', name: 'Grace' }]);
      assert.deepEqual(
        mail.personalizations[0]!.cc?.map((t) => t.email),
        ['cfo@example.com'],
      );
      const html = mail.content.find((c) => c.type === 'text/html')?.value ?? '';
      assert.match(html, /Grace/);
      const email = await h.email.getStatus(run.result?.result['emailId'] as string, authenticatedAs(id));
      assert.equal(email.template_id, 'ein-received');
      assert.equal(email.recipient_name, 'Grace');
      assert.equal(email.resource_type_ref, 'ein');
      assert.equal(email.resource_id_ref, 'ein-123');
    });
  }

  it('sends the template named by emailAction (ein-rejected)', async () => {
    h.fake.reset();
    const id = ids();
    const { body } = await h.trigger('send-email-received-ein', {
      ...id,
      emailAction: 'ein-rejected',
      recipients: ['owner@example.com'],
    });
    const run = await h.waitForStatus('send-email-received-ein', body['runId'] as string, 'completed');
    const email = await h.email.getStatus(run.result?.result['emailId'] as string, authenticatedAs(id));
    assert.equal(email.template_id, 'ein-rejected');
    const html = h.fake.accepted[0]!.body.content.find((c) => c.type === 'text/html')?.value ?? '';
    assert.match(html, /there/); // RECIPIENT_NAME defaults to "there"
    // Its one call to action leads to the product's app (APP_URL), not to the gateway.
    const text = h.fake.accepted[0]!.body.content.find((c) => c.type === 'text/plain')?.value ?? '';
    assert.match(text, /^Review and resubmit: https:\/\/app\.mailroom\.test\/dashboard$/m);
  });
});

describe('search attributes', () => {
  it('a run is found through a visibility query by CompanyId, and by its EmailId once sent', async () => {
    h.fake.reset();
    // A company and user of its own: the harness's caller has other runs in this file.
    const id = { companyId: randomUUID(), userId: randomUUID(), organizationId: randomUUID() };
    const as = {
      'x-company-id': id.companyId,
      'x-organization-id': id.organizationId,
      'x-user-id': id.userId,
    };
    const { body } = await h.trigger(
      'send-email-received-ein',
      { ...id, emailAction: 'ein-verified', recipients: ['owner@example.com'] },
      as,
    );
    const runId = body['runId'] as string;
    const run = await h.waitForStatus('send-email-received-ein', runId, 'completed', 20_000, as);
    const emailId = run.result?.result['emailId'] as string;

    // Visibility is eventually consistent: what an operator's query returns, once indexed.
    const found = async (query: string) => {
      const ids: string[] = [];
      for await (const execution of h.temporal.workflow.list({ query })) ids.push(execution.workflowId);
      return ids;
    };
    await until(
      'a run listed by its CompanyId',
      async () => (await found(`CompanyId = "${id.companyId}"`)).length > 0,
    );
    assert.deepEqual(await found(`CompanyId = "${id.companyId}"`), [runId]);
    await until(
      'a run listed by its EmailId',
      async () => (await found(`EmailId = "${emailId}"`)).length > 0,
    );
    assert.deepEqual(await found(`EmailId = "${emailId}" AND EmailAction = "ein-verified"`), [runId]);
    assert.deepEqual(await found(`UserId = "${id.userId}"`), [runId]);
    assert.deepEqual(await found(`CompanyId = "${randomUUID()}"`), []);
  });

  it('ids sent in upper case are stored and indexed in lower case (memo, input, search attributes, record)', async () => {
    h.fake.reset();
    const id = { companyId: randomUUID(), userId: randomUUID(), organizationId: randomUUID() };
    const upper = {
      companyId: id.companyId.toUpperCase(),
      userId: id.userId.toUpperCase(),
      organizationId: id.organizationId.toUpperCase(),
    };
    const as = {
      'x-company-id': upper.companyId,
      'x-organization-id': upper.organizationId,
      'x-user-id': upper.userId,
    };
    const { body } = await h.trigger(
      'send-email-received-ein',
      { ...upper, emailAction: 'ein-verified', recipients: ['owner@example.com'] },
      as,
    );
    const runId = body['runId'] as string;
    const run = await h.waitForStatus('send-email-received-ein', runId, 'completed', 20_000, as);
    const handle = h.temporal.workflow.getHandle(runId);
    const desc = await handle.describe();
    assert.deepEqual(desc.memo?.['caller'], {
      companyId: id.companyId,
      organizationId: id.organizationId,
      userId: id.userId,
    });
    const payload = (await handle.fetchHistory()).events?.[0]?.workflowExecutionStartedEventAttributes?.input
      ?.payloads?.[0]?.data;
    const input = JSON.parse(Buffer.from(payload!).toString('utf8')) as Record<string, unknown>;
    assert.deepEqual(
      [input['companyId'], input['userId'], input['organizationId']],
      [id.companyId, id.userId, id.organizationId],
    );
    const attributes = desc.typedSearchAttributes;
    assert.equal(attributes.get(COMPANY_ID), id.companyId);
    assert.equal(attributes.get(USER_ID), id.userId);
    await until('the run listed by its CompanyId', async () => {
      for await (const execution of h.temporal.workflow.list({ query: `CompanyId = "${id.companyId}"` }))
        if (execution.workflowId === runId) return true;
      return false;
    });
    const record = await h.database.db
      .collection('emails')
      .findOne({ _id: run.result?.result['emailId'] as never });
    assert.deepEqual(
      [record?.['company_id'], record?.['organization_id'], record?.['user_id']],
      [id.companyId, id.organizationId, id.userId],
    );
  });

  it('a welcome run for a UUID user id sent in upper case carries it in lower case', async () => {
    h.fake.reset();
    const userId = randomUUID();
    await h.insertUser({ _id: userId, email: `${userId}@example.com`, name: 'Lower' });
    const { body } = await h.trigger('send-welcome-email', { userId: userId.toUpperCase() });
    const run = await h.waitForStatus('send-welcome-email', body['runId'] as string, 'completed');
    assert.equal(run.result?.result['userId'], userId);
    const desc = await h.temporal.workflow.getHandle(body['runId'] as string).describe();
    assert.equal(desc.typedSearchAttributes.get(USER_ID), userId);
    assert.equal((await h.emailTo(`${userId}@example.com`))?.resource_id_ref, userId);
  });
});
