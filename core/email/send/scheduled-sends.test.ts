import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { startEmailCore, type EmailCore } from '../../../test/support/email-core.ts';
import { invoiceBody } from '../../../test/support/sample-emails.ts';
import { authenticatedAs } from '../../identity.ts';
import { statusOf, type EmailRecord } from '../records/record.ts';
import { createRecordStore } from '../records/record-store.ts';
import { PENDING_BOUND_MS, sweepStuckPending } from '../records/sweeper.ts';
import { IN_FLIGHT_COLLECTION, type InFlightEntry } from '../records/in-flight.ts';
import { MAX_SCHEDULE_AHEAD_MS, parseSendAt } from './send-at.ts';
import { createDailyQuotas } from './quotas/daily-quota.ts';

/**
 * The scheduled-send core without Temporal: `schedule` now, `sendDue` as the
 * run's send step calls it later, on the real database and the fake SendGrid
 * over HTTP. What happens at send time rather than at request time.
 */

describe('parseSendAt', () => {
  const now = new Date('2030-01-01T00:00:00Z');
  it('reads an offset, fractions and lower-case separators as RFC 3339 does', () => {
    assert.equal(parseSendAt('2030-01-01T10:30:00+09:30', now).toISOString(), '2030-01-01T01:00:00.000Z');
    assert.equal(parseSendAt('2030-01-02t00:00:00.5z', now).toISOString(), '2030-01-02T00:00:00.500Z');
    assert.equal(parseSendAt('2029-12-31T23:00:00-05:00', now).toISOString(), '2030-01-01T04:00:00.000Z');
  });
  it('takes a leap second (second 60) as the start of the next second', () => {
    assert.equal(parseSendAt('2030-01-01T05:59:60Z', now).toISOString(), '2030-01-01T06:00:00.000Z');
    assert.equal(parseSendAt('2030-01-01T06:59:60.5+01:00', now).toISOString(), '2030-01-01T06:00:00.500Z');
    assert.throws(() => parseSendAt('2030-01-01T10:00:61Z', now), {
      message: /^send_at must be an RFC 3339/,
    });
  });
  it('holds the 30-day bound to the millisecond', () => {
    const last = new Date(now.getTime() + MAX_SCHEDULE_AHEAD_MS).toISOString();
    assert.equal(parseSendAt(last, now).toISOString(), last);
    assert.throws(() => parseSendAt(new Date(now.getTime() + MAX_SCHEDULE_AHEAD_MS + 1).toISOString(), now), {
      message: 'send_at must be at most 30 days ahead.',
    });
    assert.throws(() => parseSendAt(now.toISOString(), now), { message: 'send_at must be in the future.' });
  });
  it('refuses what is not a valid instant', () => {
    for (const bad of [
      '2030-01-01 10:00:00Z',
      '2030-13-01T00:00:00Z',
      '2030-01-01T24:00:00Z',
      '2030-01-01T10:00:00+24:00',
    ])
      assert.throws(() => parseSendAt(bad, now), { message: /^send_at must be an RFC 3339 timestamp/ }, bad);
  });
});

describe('scheduled sends: what is decided at send time', () => {
  let core: EmailCore;
  let files: Server;
  let fetches = 0;
  const caller = { companyId: randomUUID(), organizationId: randomUUID(), userId: randomUUID() };
  const principal = authenticatedAs(caller);
  const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();
  const emails = () => core.database.db.collection<EmailRecord>('emails');

  before(async () => {
    files = createServer((_req, res) => {
      fetches++;
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`version ${fetches}`);
    });
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    core = await startEmailCore({
      name: 'scheduled',
      service: { attachmentAllowedAddresses: ['127.0.0.1'] },
    });
  });
  after(async () => {
    await core.close();
    await new Promise((resolve) => files.close(resolve));
  });
  beforeEach(() => core.fake.reset());

  it('fetches an attachment given by URL when the email is sent, not when it is scheduled', async () => {
    const url = `http://127.0.0.1:${(files.address() as AddressInfo).port}/terms.txt`;
    const scheduled = await core.email.scheduled.schedule(
      invoiceBody({ to: 'terms@example.com', attachments: [{ path: url }], send_at: inMs(60_000) }),
      principal,
    );
    assert.equal(fetches, 0);
    const result = await core.email.scheduled.sendDue(scheduled.email_id);
    assert.equal(result.status, 'sent');
    assert.equal(fetches, 1);
    const [mail] = core.fake.accepted;
    assert.equal(Buffer.from(mail!.body.attachments![0]!.content, 'base64').toString(), 'version 1');
    // Run again (a retry, a replay): answered from the record, nothing fetched or sent again.
    assert.deepEqual(await core.email.scheduled.sendDue(scheduled.email_id), result);
    assert.equal(fetches, 1);
    assert.equal(core.fake.received.length, 1);
  });

  it('counts against the daily limit when sent, not when scheduled; over it then, fails saying so', async () => {
    const company = { ...caller, companyId: randomUUID() };
    await createDailyQuotas(core.database.db).setLimit(company.companyId, 1);
    const as = authenticatedAs(company);
    const first = await core.email.scheduled.schedule(
      invoiceBody({ to: 'q1@example.com', send_at: inMs(60_000) }),
      as,
    );
    const second = await core.email.scheduled.schedule(
      invoiceBody({ to: 'q2@example.com', send_at: inMs(60_000) }),
      as,
    );
    assert.equal((await core.email.quotaOf(company.companyId)).used_today, 0);
    assert.equal((await core.email.scheduled.sendDue(first.email_id)).status, 'sent');
    assert.equal((await core.email.quotaOf(company.companyId)).used_today, 1);
    const over = await core.email.scheduled.sendDue(second.email_id);
    assert.deepEqual(over, {
      emailId: second.email_id,
      status: 'failed',
      error: 'daily sending limit reached.',
    });
    assert.equal(core.fake.received.length, 1);
    const record = await emails().findOne({ _id: second.email_id });
    assert.equal(statusOf(record!), 'failed');
    // A retry of the sent one (a replay of its step) does not count again.
    await core.email.scheduled.sendDue(first.email_id);
    assert.equal((await core.email.quotaOf(company.companyId)).used_today, 1);
  });

  it('checks suppressions when the email is sent: an address suppressed meanwhile gets nothing', async () => {
    const to = `later-suppressed-${randomUUID()}@example.com`;
    const scheduled = await core.email.scheduled.schedule(
      invoiceBody({ to, send_at: inMs(60_000) }),
      principal,
    );
    await core.email.suppressions.add(caller.companyId, { email: to });
    const result = await core.email.scheduled.sendDue(scheduled.email_id);
    assert.equal(result.status, 'failed');
    assert.match(String(result.error), /^all recipients are suppressed: /);
    assert.equal(core.fake.received.length, 0);
    const record = await emails().findOne({ _id: scheduled.email_id });
    assert.equal(statusOf(record!), 'failed');
    // Nothing left to cancel: 409 naming why it failed.
    await assert.rejects(core.email.scheduled.cancel(scheduled.email_id.toUpperCase(), principal), {
      kind: 'conflict',
      message: /^email already failed \(all recipients are suppressed: .*\); there is nothing to cancel\.$/,
    });
  });

  it('the sweeper leaves a scheduled email pending until 15 minutes after its send_at', async () => {
    const scheduled = await core.email.scheduled.schedule(
      invoiceBody({ to: 'patient@example.com', send_at: inMs(DAY) }),
      principal,
    );
    // Scheduled long ago for tomorrow: still waiting, not stuck.
    const longAgo = new Date(Date.now() - 2 * PENDING_BOUND_MS);
    await emails().updateOne({ _id: scheduled.email_id }, { $set: { created_at: longAgo } });
    const quiet = pino({ level: 'silent' });
    assert.deepEqual(await sweepStuckPending(createRecordStore(core.database.db), quiet), []);
    // Its time passed long ago and nothing sent it: swept like any stuck send.
    await emails().updateOne({ _id: scheduled.email_id }, { $set: { send_at: longAgo } });
    // …and for the sweeper, which reads the time from the record's in-flight entry.
    await core.database.db
      .collection<InFlightEntry>(IN_FLIGHT_COLLECTION)
      .updateOne({ _id: scheduled.email_id }, { $set: { since: longAgo } });
    const swept = await sweepStuckPending(createRecordStore(core.database.db), quiet);
    assert.deepEqual(
      swept.map((s) => [s.email_id, s.outcome]),
      [[scheduled.email_id, 'abandoned']],
    );
  });
});

const DAY = 24 * 60 * 60 * 1000;
