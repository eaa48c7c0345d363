import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startEmailCore, type EmailCore } from '../../../test/support/email-core.ts';
import { invoiceBody } from '../../../test/support/sample-emails.ts';
import { authenticatedAs, type Principal } from '../../identity.ts';
import { SCHEDULED_PENDING_COLLECTION } from './scheduled-pending.ts';

/**
 * The bound on what a company keeps scheduled (SCHEDULED_MAX_PENDING,
 * SCHEDULED_MAX_PENDING_MB), on the real database: the bound holds, a sent
 * or cancelled email frees its place, companies and modes are apart, and a
 * count left high by a crash is repaired when it refuses.
 */
const MAX = 3;
const TOO_MANY =
  'too many scheduled emails pending for this company. maximum is 3; cancel some or wait until they are sent.';

describe('scheduled sends: the bound on what a company keeps scheduled', () => {
  let core: EmailCore;
  before(async () => {
    core = await startEmailCore({
      name: 'scheduled_pending',
      env: { SCHEDULED_MAX_PENDING: String(MAX), SCHEDULED_MAX_PENDING_MB: '12' },
    });
  });
  after(() => core.close());

  const company = (): Principal =>
    authenticatedAs({ companyId: randomUUID(), organizationId: randomUUID(), userId: randomUUID() });
  const tomorrow = () => new Date(Date.now() + 86_400_000).toISOString();
  const schedule = (as: Principal, extra: Record<string, unknown> = {}) =>
    core.email.scheduled.schedule(
      invoiceBody({ to: `pending-${randomUUID()}@example.com`, send_at: tomorrow(), ...extra }),
      as,
    );
  const companyIdOf = (as: Principal) => as.caller.companyId!;

  it(`admits ${MAX} pending scheduled emails of a company, then a 409; others unaffected`, async () => {
    const as = company();
    for (let i = 0; i < MAX; i++) await schedule(as);
    await assert.rejects(schedule(as), { kind: 'conflict', message: TOO_MANY });
    // Nothing of the refused one was written.
    const records = await core.database.db
      .collection('emails')
      .countDocuments({ company_id: companyIdOf(as), send_at: { $exists: true } });
    assert.equal(records, MAX);
    // Another company, and the same company's test mode, have places of their own.
    await schedule(company());
    const testMode = authenticatedAs({ ...as.caller, test: true });
    await schedule(testMode);
  });

  it('a cancelled email and a sent one free their places', async () => {
    const as = company();
    const made = [];
    for (let i = 0; i < MAX; i++) made.push(await schedule(as));
    await assert.rejects(schedule(as), { message: TOO_MANY });

    await core.email.scheduled.cancel(made[0]!.email_id, as);
    const again = await schedule(as);
    await assert.rejects(schedule(as), { message: TOO_MANY });

    // The run's steps: send when due, then forget the stored request.
    assert.equal((await core.email.scheduled.sendDue(made[1]!.email_id)).status, 'sent');
    await core.email.scheduled.forget(made[1]!.email_id);
    // Forgetting twice (a retried step) frees one place, not two.
    await core.email.scheduled.forget(made[1]!.email_id);
    await schedule(as);
    await assert.rejects(schedule(as), { message: TOO_MANY });
    assert.ok(again.email_id);
  });

  it('a scheduled email the sweeper fails (its run was terminated) frees its place', async () => {
    const as = company();
    const soon = await schedule(as, { send_at: new Date(Date.now() + 1_000).toISOString() });
    for (let i = 1; i < MAX; i++) await schedule(as);
    await assert.rejects(schedule(as), { message: TOO_MANY });
    // No run sends it (as if terminated in the Web UI): pending past its time, then swept.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    const swept = await core.email.sweepStuckPending(0);
    assert.ok(swept.some((r) => r.email_id === soon.email_id));
    assert.equal(
      await core.database.db.collection('scheduled_emails').countDocuments({ _id: soon.email_id as never }),
      0,
    );
    await schedule(as);
  });

  it('holds the bound for schedules made at once', async () => {
    // Several rounds: the refusals' recount runs while the admitted ones are still being stored.
    for (let round = 0; round < 3; round++) {
      const as = company();
      const outcomes = await Promise.allSettled(Array.from({ length: 12 }, () => schedule(as)));
      assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, MAX, `round ${round}`);
      for (const o of outcomes)
        if (o.status === 'rejected') assert.equal((o.reason as Error).message, TOO_MANY);
    }
  });

  it('bounds the stored request the pending emails hold (SCHEDULED_MAX_PENDING_MB)', async () => {
    const as = company();
    // Two inline attachments of 2.6 MB each: ≈ 7 MB of stored JSON per request.
    const file = Buffer.alloc(2_600_000, 'a').toString('base64');
    const attachments = [1, 2].map((n) => ({
      content: file,
      filename: `f${n}.txt`,
      contentType: 'text/plain',
    }));
    await schedule(as, { attachments });
    await assert.rejects(schedule(as, { attachments }), {
      message:
        'scheduled emails pending for this company hold too much request body. maximum is 12 MB; cancel some or wait until they are sent.',
    });
    // A small one still fits beside it.
    await schedule(as);
  });

  it('a count left too high (a crash between count and insert) is repaired when it refuses', async () => {
    const as = company();
    await schedule(as);
    const counters = core.database.db.collection<{ _id: string; count: number; chars: number }>(
      SCHEDULED_PENDING_COLLECTION,
    );
    const key = `${companyIdOf(as)}:live`;
    await counters.updateOne({ _id: key }, { $set: { count: MAX } });
    // Really one pending: counted again, and two more fit.
    await schedule(as);
    await schedule(as);
    assert.equal((await counters.findOne({ _id: key }))?.count, MAX);
    await assert.rejects(schedule(as), { message: TOO_MANY });
  });
});
