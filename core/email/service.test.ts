import { after, before, beforeEach, describe, it } from 'node:test';
import { authenticatedAs } from '../identity.ts';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Database } from '../db.ts';
import { isMailroomError } from '../errors.ts';
import type { FakeSendGrid } from '../../test/support/fake-sendgrid.ts';
import { mailroomFailure, startEmailCore, type EmailCore } from '../../test/support/email-core.ts';
import type { EmailService } from './contract.ts';
import type { Caller } from '../identity.ts';
import { STATUS_RANK, statusOf, type EmailRecord } from './records/record.ts';
import { createRecordStore } from './records/record-store.ts';
import { emailIdOfViewKey } from './tracking/view-key.ts';
import { welcomeBody } from '../../test/support/sample-emails.ts';

/**
 * The core as the workflow activities use it (no HTTP in front): idempotent
 * sends, markFailed, and the record's status machine under concurrency.
 */

const caller: Caller = { companyId: randomUUID(), organizationId: randomUUID(), userId: randomUUID() };
const body = (subject = 'Welcome') =>
  welcomeBody({ to: { email: 'user@example.com', name: 'User' }, subject });

describe('email service core', () => {
  let database: Database;
  let fake: FakeSendGrid;
  let email: EmailService;
  const emails = () => database.db.collection<EmailRecord>('emails');
  /** A stored record with its status spelled out (the database holds only the rank). */
  const withStatus = (doc: EmailRecord | null) => doc && { ...doc, status: statusOf(doc) };
  const record = async (emailId: string) => withStatus(await emails().findOne({ _id: emailId }));
  const byKey = async (key: string) => withStatus(await emails().findOne({ idempotency_key: key }));

  let core: EmailCore;

  before(async () => {
    core = await startEmailCore({ name: 'email_core', env: { SENDGRID_WEBHOOK_ALLOW_UNSIGNED: 'true' } });
    ({ fake, database, email } = core);
  });
  after(() => core.close());
  beforeEach(() => fake.reset());

  it('ensureIndexes is idempotent and leaves `emails` with its `_id` index only', async () => {
    await email.ensureIndexes();
    await email.ensureIndexes();
    const names = (await database.db.collection('emails').indexes()).map((i) => i.name);
    assert.deepEqual(names, ['_id_']);
  });

  it('ensureIndexes drops the indexes no query uses any more', async () => {
    const emailsCollection = database.db.collection('emails');
    await emailsCollection.createIndex({ provider_id: 1 }, { name: 'provider_id' });
    await emailsCollection.createIndex({ company_id: 1, email_id: 1 }, { name: 'company_email' });
    await emailsCollection.createIndex({ email_id: 1 }, { unique: true, name: 'email_id_unique' });
    await emailsCollection.createIndex({ view_key: 1 }, { unique: true, name: 'view_key_unique' });
    await email.ensureIndexes();
    await email.ensureIndexes();
    assert.deepEqual(
      (await emailsCollection.indexes()).map((i) => i.name),
      ['_id_'],
    );
  });

  describe('idempotency key', () => {
    it('a second call with the same key returns the same result and sends nothing', async () => {
      const key = `wf-${randomUUID()}/activity-1`;
      const first = await email.send(body(), authenticatedAs(caller), { idempotencyKey: key });
      const second = await email.send(body(), authenticatedAs(caller), { idempotencyKey: key });
      assert.deepEqual(second, first);
      assert.equal(fake.received.length, 1);
      assert.equal(await database.db.collection('emails').countDocuments({ idempotency_key: key }), 1);
    });

    it('concurrent calls with the same key send once; the others are told to retry', async () => {
      const key = `wf-${randomUUID()}/activity-1`;
      fake.delayMs = 100;
      const results = await Promise.allSettled(
        [1, 2, 3].map(() => email.send(body(), authenticatedAs(caller), { idempotencyKey: key })),
      );
      const fulfilled = results.filter((r) => r.status === 'fulfilled');
      const rejected = results.filter((r) => r.status === 'rejected');
      assert.equal(fulfilled.length, 1);
      for (const r of rejected) {
        assert.ok(isMailroomError(r.reason), String(r.reason));
        assert.equal(r.reason.kind, 'transient');
        assert.equal(r.reason.message, 'email send already in progress.');
      }
      assert.equal(fake.received.length, 1);
      assert.equal(await database.db.collection('emails').countDocuments({ idempotency_key: key }), 1);
      // Once done, a retry gets the result without sending.
      const again = await email.send(body(), authenticatedAs(caller), { idempotencyKey: key });
      assert.equal(again.email_id, fulfilled[0]!.value.email_id);
      assert.equal(fake.received.length, 1);
    });

    it('a transient failure leaves the record pending; the retry reuses it and sends', async () => {
      const key = `wf-${randomUUID()}/activity-2`;
      fake.plan(503);
      const err = await mailroomFailure(email.send(body(), authenticatedAs(caller), { idempotencyKey: key }));
      assert.equal(err.kind, 'transient');
      const pending = await byKey(key);
      assert.equal(pending?.['status'], 'pending');
      assert.match(String(pending?.['error']), /^email provider unavailable/);
      assert.equal(pending?.['attempt_id'], null, 'the provider said no: nothing in flight');

      const retried = await email.send(body(), authenticatedAs(caller), { idempotencyKey: key });
      assert.equal(retried.email_id, pending?.['email_id']);
      const sent = await record(retried.email_id);
      assert.equal(sent?.['status'], 'sent');
      assert.equal(sent?.['error'], null);
      assert.equal(fake.received.length, 2);
      assert.equal(fake.accepted.length, 1);
    });

    it('a provider rejection fails the record; the step run again (a reset) sends it once, same record', async () => {
      const key = `wf-${randomUUID()}/activity-3`;
      fake.plan(400);
      const first = await mailroomFailure(
        email.send(body(), authenticatedAs(caller), { idempotencyKey: key }),
      );
      assert.equal(first.kind, 'provider_rejected');
      const failed = await byKey(key);
      assert.equal(failed?.['status'], 'failed');
      const again = await email.send(body(), authenticatedAs(caller), { idempotencyKey: key });
      assert.equal(again.email_id, failed?._id, 'the same record');
      const replay = await email.send(body(), authenticatedAs(caller), { idempotencyKey: key });
      assert.equal(replay.provider_id, again.provider_id);
      assert.equal(fake.accepted.length, 1, 'sent once');
      const sent = await byKey(key);
      assert.equal(sent?.['status'], 'sent');
      assert.equal(sent?.['error'], null);
      assert.equal(sent?.resends, 1);
    });

    it('markFailed finalises a pending keyed send; the step run again (a reset) sends it once', async () => {
      const key = `wf-${randomUUID()}/activity-4`;
      fake.outage = 503; // the provider is down until the workflow gives up
      await mailroomFailure(email.send(body(), authenticatedAs(caller), { idempotencyKey: key }));
      await email.markFailed(key, 'gave up after 5 attempts');
      const failed = await byKey(key);
      assert.equal(failed?.['status'], 'failed');
      assert.equal(failed?.['error'], 'gave up after 5 attempts');
      assert.equal(await email.failedWithoutSending(key), true);
      fake.outage = undefined; // back
      const [a, b] = await Promise.allSettled([
        email.send(body(), authenticatedAs(caller), { idempotencyKey: key }),
        email.send(body(), authenticatedAs(caller), { idempotencyKey: key }),
      ]);
      const sent = [a, b].filter((r) => r.status === 'fulfilled');
      assert.ok(sent.length >= 1);
      assert.equal(fake.accepted.length, 1, 'two resets at once still send once');
      assert.equal((await byKey(key))?.['status'], 'sent');
      assert.equal(await email.failedWithoutSending(key), false);
    });

    it('callOff fails a pending send no attempt holds; a reset sends it; a sent one stays sent', async () => {
      const key = `wf-${randomUUID()}/activity-6`;
      fake.outage = 503; // the step waits to retry when its run is cancelled
      await mailroomFailure(email.send(body(), authenticatedAs(caller), { idempotencyKey: key }));
      assert.equal(await email.callOff(key), 'called_off');
      const failed = await byKey(key);
      assert.equal(failed?.['status'], 'failed');
      assert.equal(
        failed?.['error'],
        'cancelled: its workflow run was cancelled before the provider took the email.',
      );
      assert.equal(await email.failedWithoutSending(key), true, 'the provider never had it');
      assert.equal(await email.callOff(key), 'finished', 'twice is fine');
      fake.outage = undefined;
      await email.send(body(), authenticatedAs(caller), { idempotencyKey: key });
      assert.equal(fake.accepted.length, 1, 'the run reset sends it once');
      assert.equal(await email.callOff(key), 'finished');
      assert.equal((await byKey(key))?.['status'], 'sent');
      assert.equal(await email.callOff(`unknown-${randomUUID()}`), 'none');
    });

    it('callOff leaves a send an attempt holds, or one that may have reached the provider', async () => {
      const key = `wf-${randomUUID()}/activity-7`;
      fake.outage = 503;
      await mailroomFailure(email.send(body(), authenticatedAs(caller), { idempotencyKey: key }));
      fake.outage = undefined;
      const emailId = (await byKey(key))!._id;
      // An attempt in flight: it holds the key's lease.
      await database.db
        .collection<{ _id: string; attempt_until: Date | null }>('email_idempotency')
        .updateOne({ _id: key }, { $set: { attempt_until: new Date(Date.now() + 60_000) } });
      assert.equal(await email.callOff(key), 'sending');
      await database.db
        .collection<{ _id: string; attempt_until: Date | null }>('email_idempotency')
        .updateOne({ _id: key }, { $set: { attempt_until: null } });
      // An attempt that died mid-call left its mark: the provider may have the message.
      await emails().updateOne({ _id: emailId }, { $set: { attempt_id: randomUUID() } });
      assert.equal(await email.callOff(key), 'sending');
      assert.equal((await byKey(key))?.['status'], 'pending');
    });

    it('markFailed never overrides a sent record, and ignores unknown keys', async () => {
      const key = `wf-${randomUUID()}/activity-5`;
      const sent = await email.send(body(), authenticatedAs(caller), { idempotencyKey: key });
      await email.markFailed(key, 'too late');
      assert.equal((await record(sent.email_id))?.['status'], 'sent');
      await email.markFailed(`unknown-${randomUUID()}`, 'whatever');
    });
  });

  describe('a send whose outcome is unknown is never repeated blindly', () => {
    const OUTCOME_UNKNOWN =
      'email outcome unknown: the provider may have accepted it; not resent to avoid a duplicate.';
    const OUTCOME_PENDING = "email outcome unknown: waiting for the provider's events before deciding.";
    /** As if the attempt had begun `ms` ago. */
    const age = (emailId: string, ms: number) =>
      emails().updateOne({ _id: emailId }, { $set: { attempt_started_at: new Date(Date.now() - ms) } });

    it('the record is marked with the attempt before the provider hears of it, cleared once sent', async () => {
      const key = `wf-${randomUUID()}/mark`;
      fake.delayMs = 300;
      const sending = email.send(body(), authenticatedAs(caller), { idempotencyKey: key });
      await fake.waitForRequests(1);
      const inFlight = await byKey(key);
      assert.equal(inFlight?.['status'], 'pending');
      assert.match(String(inFlight?.['attempt_id']), /^[0-9a-f-]{36}$/);
      assert.ok(inFlight?.['attempt_started_at'] instanceof Date);
      const sent = await sending;
      const done = await record(sent.email_id);
      assert.equal(done?.['status'], 'sent');
      assert.equal(done?.['attempt_id'], null);
    });

    it('accepted then dropped: retries wait for events, then fail the record as outcome unknown; nothing resent', async () => {
      const key = `wf-${randomUUID()}/dropped`;
      fake.plan('accept-then-drop');
      const first = await mailroomFailure(
        email.send(body(), authenticatedAs(caller), { idempotencyKey: key }),
      );
      assert.equal(first.kind, 'transient', 'the activity retries');
      assert.equal(first.message, OUTCOME_PENDING);
      const pending = await byKey(key);
      assert.equal(pending?.['status'], 'pending');
      assert.ok(pending?.['attempt_id'], 'the attempt mark stays');

      // A retry soon after: still waiting, the provider is not called again.
      const second = await mailroomFailure(
        email.send(body(), authenticatedAs(caller), { idempotencyKey: key }),
      );
      assert.equal(second.message, OUTCOME_PENDING);
      assert.equal(fake.received.length, 1);

      // Past the wait, no event came: failed, explained, not retryable.
      await age(String(pending?.['email_id']), 61_000);
      const verdict = await mailroomFailure(
        email.send(body(), authenticatedAs(caller), { idempotencyKey: key }),
      );
      assert.equal(verdict.kind, 'outcome_unknown');
      assert.equal(verdict.retryable, false);
      assert.equal(verdict.message, OUTCOME_UNKNOWN);
      const failed = await byKey(key);
      assert.equal(failed?.['status'], 'failed');
      assert.equal(failed?.['error'], OUTCOME_UNKNOWN);
      assert.equal(failed?.['error_kind'], 'outcome_unknown');
      assert.equal(fake.received.length, 1, 'sent once, never resent');

      // The provider's delivery event proves it went out: the guess is corrected.
      await email.handleSendGridWebhook(
        JSON.stringify([{ event: 'delivered', email_id: failed?.['email_id'], timestamp: 1 }]),
        {},
      );
      const corrected = await byKey(key);
      assert.equal(corrected?.['status'], 'delivered');
      assert.equal(corrected?.['error'], null);
    });

    it('given up as unknown, then confirmed not sent by the operator: the next attempt (a reset) sends it at once', async () => {
      const key = `wf-${randomUUID()}/confirmed`;
      fake.plan('accept-then-drop');
      await mailroomFailure(email.send(body(), authenticatedAs(caller), { idempotencyKey: key }));
      const emailId = String((await byKey(key))?.['email_id']);
      await age(emailId, 61_000);
      const verdict = await mailroomFailure(
        email.send(body(), authenticatedAs(caller), { idempotencyKey: key }),
      );
      assert.equal(verdict.kind, 'outcome_unknown');
      assert.ok(await createRecordStore(database.db).confirmNotSent(emailId));
      // No lease left behind by the attempt that gave up: sent now, not "in progress" for a minute.
      const sent = await email.send(body(), authenticatedAs(caller), { idempotencyKey: key });
      assert.equal(sent.email_id, emailId);
      assert.equal((await record(emailId))?.['status'], 'sent');
      assert.equal(fake.received.length, 2, 'the dropped attempt, then this one');
    });

    it("accepted then dropped, then the provider's processed event: the retry answers sent without sending", async () => {
      const key = `wf-${randomUUID()}/processed`;
      fake.plan('accept-then-drop');
      await mailroomFailure(email.send(body(), authenticatedAs(caller), { idempotencyKey: key }));
      const pending = await byKey(key);
      await email.handleSendGridWebhook(
        JSON.stringify([{ event: 'processed', email_id: pending?.['email_id'], timestamp: 1 }]),
        {},
      );
      const retried = await email.send(body(), authenticatedAs(caller), { idempotencyKey: key });
      assert.equal(retried.email_id, pending?.['email_id']);
      assert.equal((await record(retried.email_id))?.['status'], 'sent');
      assert.equal(fake.received.length, 1);
    });

    it('an attempt that died mid-call: once its lease expires the retry does not resend', async () => {
      const key = `wf-${randomUUID()}/dead`;
      await email.send(body(), authenticatedAs(caller), { idempotencyKey: key });
      // What a process killed mid-call leaves behind: the record pending with
      // the attempt's mark, and a lease that has since expired.
      const left = await byKey(key);
      await emails().updateOne(
        { _id: String(left?.['email_id']) },
        { $set: { status_rank: STATUS_RANK.pending, attempt_id: randomUUID() } },
      );
      await database.db
        .collection<{ _id: string }>('email_idempotency')
        .updateOne({ _id: key }, { $set: { attempt_until: new Date(Date.now() - 1) } });
      await age(String(left?.['email_id']), 61_000);
      const verdict = await mailroomFailure(
        email.send(body(), authenticatedAs(caller), { idempotencyKey: key }),
      );
      assert.equal(verdict.kind, 'outcome_unknown');
      assert.equal(fake.received.length, 1);
    });

    it('a workflow giving up on a send of unknown outcome leaves it explained as such', async () => {
      const key = `wf-${randomUUID()}/give-up`;
      fake.plan('accept-then-drop');
      await mailroomFailure(email.send(body(), authenticatedAs(caller), { idempotencyKey: key }));
      await email.markFailed(key, 'activity timed out');
      const failed = await byKey(key);
      assert.equal(failed?.['status'], 'failed');
      assert.equal(failed?.['error'], `${OUTCOME_UNKNOWN} (activity timed out)`);
      assert.equal(failed?.['error_kind'], 'outcome_unknown');
    });

    it('without a key (HTTP): the caller is told the outcome is unknown, the record says so', async () => {
      fake.plan('accept-then-drop');
      const err = await mailroomFailure(email.send(body('dropped over http'), authenticatedAs(caller)));
      assert.equal(err.kind, 'outcome_unknown');
      assert.match(err.message, /^email outcome unknown: .*\(email provider unavailable: /);
      const stored = withStatus(await emails().findOne({ subject: 'dropped over http' }));
      assert.equal(stored?.['status'], 'failed');
      assert.equal(stored?.['error'], err.message);
      assert.equal(fake.received.length, 1);
    });
  });

  describe('status machine', () => {
    it('concurrent out-of-order events converge on the furthest status', async () => {
      const sent = await email.send(body(), authenticatedAs(caller));
      const records = createRecordStore(database.db);
      const events = ['delivered', 'opened', 'delivered', 'clicked', 'delivered', 'opened'] as const;
      await Promise.all(events.map((e) => records.applyEvent({ email_id: sent.email_id }, e)));
      const stored = await record(sent.email_id);
      assert.equal(stored?.['status'], 'opened');
      assert.equal(stored?.['delivered'], true);
      assert.equal(stored?.['opened'], true);
      assert.equal(stored?.['clicked'], true);
    });

    it('a late "sent" never moves a delivered record back, but keeps the provider id', async () => {
      const records = createRecordStore(database.db);
      const sent = await email.send(body(), authenticatedAs(caller));
      await emails().updateOne({ _id: sent.email_id }, { $set: { status_rank: STATUS_RANK.pending } });
      await records.applyEvent({ email_id: sent.email_id }, 'delivered');
      await records.markSent(sent.email_id, 'late-id');
      const stored = await record(sent.email_id);
      assert.equal(stored?.['status'], 'delivered');
      assert.equal(stored?.['provider_id'], 'late-id');
    });

    it('a provider answer after the record was failed as outcome unknown makes it sent again', async () => {
      const records = createRecordStore(database.db);
      const sent = await email.send(body('answered late'), authenticatedAs(caller));
      await emails().updateOne({ _id: sent.email_id }, { $set: { status_rank: STATUS_RANK.pending } });
      assert.equal(
        await records.markFailed(sent.email_id, 'email outcome unknown: not resent.', 'outcome_unknown'),
        true,
      );
      await records.markSent(sent.email_id, 'late-answer');
      const stored = await record(sent.email_id);
      assert.equal(stored?.['status'], 'sent');
      assert.equal(stored?.['error'], null);
      assert.equal(stored?.['error_kind'], null);
      assert.equal(stored?.['provider_id'], 'late-answer');
    });

    it('failed is terminal for delivery; an open still sets the flag', async () => {
      fake.plan(400);
      await mailroomFailure(email.send(body('will fail'), authenticatedAs(caller)));
      const failed = await database.db.collection('emails').findOne({ subject: 'will fail' });
      const records = createRecordStore(database.db);
      await records.applyEvent({ email_id: String(failed?.['email_id']) }, 'delivered');
      await records.applyEvent({ email_id: String(failed?.['email_id']) }, 'opened');
      const stored = await record(String(failed?.['email_id']));
      assert.equal(stored?.['status'], 'failed');
      assert.equal(stored?.['opened'], true);
      assert.equal(stored?.['delivered'], true);
    });

    it('first-event times are kept ($min), time follows the latest open', async () => {
      const sent = await email.send(body(), authenticatedAs(caller));
      const records = createRecordStore(database.db);
      const t1 = new Date(Date.now() - 60_000);
      const t2 = new Date();
      await records.applyEvent({ email_id: sent.email_id }, 'opened', t2);
      await records.applyEvent({ email_id: sent.email_id }, 'opened', t1);
      const stored = await record(sent.email_id);
      assert.equal((stored?.['opened_at'] as Date).getTime(), t1.getTime());
    });

    it('view keys are 46 base64url characters, distinct, and name their record', async () => {
      const a = await email.send(body(), authenticatedAs(caller));
      const b = await email.send(body(), authenticatedAs(caller));
      const keys = [(await record(a.email_id))?.['view_key'], (await record(b.email_id))?.['view_key']];
      for (const k of keys) assert.match(String(k), /^[A-Za-z0-9_-]{46}$/);
      assert.notEqual(keys[0], keys[1]);
      assert.equal(emailIdOfViewKey(String(keys[0])), a.email_id);
      assert.equal(emailIdOfViewKey(String(keys[1])), b.email_id);
    });

    it('a bounce outranks an open whatever the order; flags are set either way', async () => {
      const records = createRecordStore(database.db);
      const openFirst = await email.send(body(), authenticatedAs(caller));
      const bounceFirst = await email.send(body(), authenticatedAs(caller));
      await records.applyEvent({ email_id: openFirst.email_id }, 'opened');
      await records.applyEvent({ email_id: openFirst.email_id }, 'bounced');
      await records.applyEvent({ email_id: bounceFirst.email_id }, 'bounced');
      await records.applyEvent({ email_id: bounceFirst.email_id }, 'opened');
      for (const id of [openFirst.email_id, bounceFirst.email_id]) {
        const stored = await record(id);
        assert.equal(stored?.['status'], 'bounced', id);
        assert.equal(stored?.['opened'], true, id);
        assert.ok(stored?.['bounced_at'] instanceof Date, id);
      }
    });

    it('markFailed only fails a pending record', async () => {
      const records = createRecordStore(database.db);
      const sent = await email.send(body(), authenticatedAs(caller));
      assert.equal(await records.markFailed(sent.email_id, 'too late', 'transient'), false);
      const stored = await record(sent.email_id);
      assert.equal(stored?.['status'], 'sent');
      assert.equal(stored?.['error'], null);
      assert.equal(await records.markFailed(randomUUID(), 'nobody', 'transient'), false);
    });
  });
});
