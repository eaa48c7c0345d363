import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startScheduledOutbox } from '../api/routes/email/scheduled-runs.ts';
import { authenticatedAs } from '../core/identity.ts';
import { createLogger } from '../core/logger.ts';
import { scheduledRunId } from '../core/workflows/scheduled-send.ts';
import { invoiceBody } from '../test/support/sample-emails.ts';
import { WorkflowHarness } from '../test/support/workflow-harness.ts';

/**
 * Scheduled sends end to end on the real servers: the gateway answers at
 * once, the workflow's durable timer fires at `send_at`, and the fake
 * SendGrid counts what the provider would have delivered.
 */
const h = new WorkflowHarness();
const organizationId = randomUUID();
const headers = { 'x-organization-id': organizationId };
before(async () => {
  await h.start();
  await h.startWorker();
});
after(() => h.stop());

const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const acceptedFor = (address: string) =>
  h.fake.accepted.filter((m) => m.body.personalizations[0]?.to[0]?.email === address).length;
const statusOf = async (emailId: string) => (await h.request('GET', `/api/email/status/${emailId}`)).body;

async function schedule(to: string, sendAt: string) {
  const res = await h.request('POST', '/api/email/send', invoiceBody({ to, send_at: sendAt }), headers);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}

/** How the email's run ended, once it exists (the outbox may start it late) and is over. */
async function runOutcome(emailId: string) {
  const handle = h.temporal.workflow.getHandle(scheduledRunId(emailId));
  for (let i = 0; !(await handle.describe().catch(() => undefined)); i++) {
    if (i > 100) throw new Error(`no run for ${emailId}`);
    await sleep(100);
  }
  return handle.result().then(
    (value: unknown) => ({ status: 'completed', value }),
    (err: unknown) => ({ status: 'failed', value: String(err) }),
  );
}

describe('sendScheduledEmail', () => {
  it('answers at once without a provider id, then sends exactly one email at send_at', async () => {
    const to = `later-${randomUUID()}@example.com`;
    const sendAt = inMs(3000);
    const body = await schedule(to, sendAt);
    assert.deepEqual(Object.keys(body).sort(), ['email_id', 'message', 'scheduled', 'send_at', 'success']);
    assert.equal(body['scheduled'], true);
    assert.equal(body['send_at'], sendAt);
    const emailId = String(body['email_id']);

    const pending = (await statusOf(emailId))['data'] as Record<string, unknown>;
    assert.equal(pending['status'], 'pending');
    assert.equal(pending['send_at'], sendAt);
    assert.equal(acceptedFor(to), 0);

    const outcome = await runOutcome(emailId);
    assert.ok(Date.now() >= Date.parse(sendAt), 'not sent before send_at');
    assert.equal(outcome.status, 'completed');
    assert.equal((outcome.value as Record<string, unknown>)['status'], 'sent');
    assert.equal(acceptedFor(to), 1);
    const sent = (await statusOf(emailId))['data'] as Record<string, unknown>;
    assert.equal(sent['status'], 'sent');
    assert.equal(sent['send_at'], sendAt);
    // Its stored request is gone: nothing left to send again.
    assert.equal(
      await h.database.db.collection('scheduled_emails').countDocuments({ _id: emailId } as never),
      0,
    );
    await sleep(1000);
    assert.equal(acceptedFor(to), 1);
  });

  it('a cancelled email is never sent; the record ends failed with error cancelled', async () => {
    const to = `cancelled-${randomUUID()}@example.com`;
    const sendAt = inMs(3000);
    const emailId = String((await schedule(to, sendAt))['email_id']);

    const res = await h.request('DELETE', `/api/email/scheduled/${emailId}`, undefined, headers);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, { success: true, email_id: emailId, status: 'failed', error: 'cancelled' });
    // Cancelling again answers the same.
    const again = await h.request('DELETE', `/api/email/scheduled/${emailId}`, undefined, headers);
    assert.equal(again.status, 200);

    const outcome = await runOutcome(emailId);
    assert.equal(outcome.status, 'failed');
    assert.match(String(outcome.value), /cancel/i);
    await sleep(Math.max(0, Date.parse(sendAt) - Date.now()) + 1500);
    assert.equal(acceptedFor(to), 0);
    const data = (await statusOf(emailId))['data'] as Record<string, unknown>;
    assert.equal(data['status'], 'failed');
    assert.equal(data['error'], 'cancelled');
  });

  it('eight cancels at once all answer 200 cancelled, and nothing is sent', async () => {
    const to = `cancelled-at-once-${randomUUID()}@example.com`;
    const sendAt = inMs(3000);
    const emailId = String((await schedule(to, sendAt))['email_id']);
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        h.request('DELETE', `/api/email/scheduled/${emailId}`, undefined, headers),
      ),
    );
    for (const res of answers) {
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body, { success: true, email_id: emailId, status: 'failed', error: 'cancelled' });
    }
    assert.equal((await runOutcome(emailId)).status, 'failed');
    await sleep(Math.max(0, Date.parse(sendAt) - Date.now()) + 1500);
    assert.equal(acceptedFor(to), 0);
  });

  it('a cancel while the run is asleep and Temporal is not told still wins: the woken run sends nothing', async () => {
    const to = `db-cancel-${randomUUID()}@example.com`;
    const emailId = String((await schedule(to, inMs(2500)))['email_id']);
    // Straight through the core: the run keeps sleeping, unaware.
    await h.email.scheduled.cancel(emailId, authenticatedAs({ ...h.caller, organizationId }));
    const outcome = await runOutcome(emailId);
    assert.equal(outcome.status, 'completed');
    assert.deepEqual(outcome.value, { emailId, status: 'cancelled' });
    assert.equal(acceptedFor(to), 0);
  });

  it('after it was sent, DELETE is 409; another company gets 404', async () => {
    const to = `sent-${randomUUID()}@example.com`;
    const emailId = String((await schedule(to, inMs(1000)))['email_id']);
    const other = await h.request('DELETE', `/api/email/scheduled/${emailId}`, undefined, {
      'x-company-id': randomUUID(),
      'x-user-id': randomUUID(),
    });
    assert.equal(other.status, 404);
    assert.deepEqual(other.body, { success: false, error: 'scheduled email not found.' });

    await runOutcome(emailId);
    const late = await h.request('DELETE', `/api/email/scheduled/${emailId}`, undefined, headers);
    assert.equal(late.status, 409);
    assert.deepEqual(late.body, {
      success: false,
      error: 'email already sent; it can no longer be cancelled.',
    });
    assert.equal(acceptedFor(to), 1);
  });

  it('a run Temporal could not start is started by the outbox, and the email sent once', async () => {
    const to = `outbox-${randomUUID()}@example.com`;
    // Scheduled through the core alone: as if Temporal had been unreachable when the gateway tried.
    const scheduled = await h.email.scheduled.schedule(
      invoiceBody({ to, send_at: inMs(1500) }),
      authenticatedAs({ ...h.caller, organizationId }),
    );
    const outbox = startScheduledOutbox(
      { temporal: h.temporal, config: h.config, email: h.email, logger: createLogger('test', h.config) },
      { intervalMs: 200, graceMs: 0 },
    );
    try {
      const outcome = await runOutcome(scheduled.email_id);
      assert.equal(outcome.status, 'completed');
      assert.equal(acceptedFor(to), 1);
    } finally {
      await outbox.stop();
    }
  });
});
