/**
 * A worker killed while an email step waits for its provider's rate
 * (SENDGRID_MAX_PER_SECOND): nothing reached the provider, so the run must
 * still complete with exactly one email. The step marks the email's record
 * with its attempt only after the wait, right before the hand-over; a mark
 * written before the wait made the retry take the email for "outcome
 * unknown" and fail the run without ever sending it.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { isDuplicateKeyError } from '../core/errors.ts';
import { WorkflowHarness } from './support/workflow-harness.ts';
import { until } from './support/until.ts';

const h = new WorkflowHarness();
let child: ChildProcess | undefined;

before(async () => {
  await h.start({ SENDGRID_MAX_PER_SECOND: '1' });
});
after(async () => {
  child?.kill('SIGKILL');
  await h.stop();
});

interface Slot {
  _id: string;
  at: Date;
  /** Ours: the slots this test keeps taken; the step's own has no such field. */
  filler?: true;
}

it(
  'the run completes with one email after its worker died waiting for a rate slot',
  { timeout: 150_000 },
  async () => {
    h.fake.reset();
    const userId = `user-${randomUUID()}`;
    const address = `${userId}@example.com`;
    await h.insertUser({ _id: userId, email: address, name: 'Rae' });
    const slots = h.database.db.collection<Slot>('provider_rate_slots');

    // Keep the next slot taken (1/s: slot N starts at second N): a send asking
    // at time t finds the slot at ceil(t) gone and takes the one after it, 1–2 s
    // ahead (within the 2 s a step waits), and sleeps until then.
    let filling = true;
    const filler = (async () => {
      while (filling) {
        const next = Math.ceil(Date.now() / 1000);
        await slots
          .insertOne({
            _id: `sendgrid:${String(next).padStart(16, '0')}`,
            at: new Date(next * 1000),
            filler: true,
          })
          .catch((err: unknown) => {
            if (!isDuplicateKeyError(err)) throw err;
          });
        await new Promise((r) => setTimeout(r, 50));
      }
    })();

    child = h.spawnWorkerProcess({ SENDGRID_MAX_PER_SECOND: '1' });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child!.once('exit', (_c, signal) => resolve(signal)),
    );

    const { body } = await h.trigger('send-welcome-email', { userId });
    const runId = body['runId'] as string;

    // The step has claimed its slot and now sleeps until it: kill the worker there.
    const claimed = await until(
      "the step's rate slot",
      () => slots.findOne({ filler: { $exists: false } }),
      60_000,
      20,
    ).finally(() => (filling = false));
    child.kill('SIGKILL');
    assert.equal(await exited, 'SIGKILL');
    await filler;
    assert.ok(claimed.at.getTime() > Date.now(), 'killed before its slot came');
    assert.equal(h.fake.received.length, 0, 'nothing reached the provider');

    // A new worker retries the step once Temporal sees the old one gone and its lease ends.
    await h.startWorker();
    const run = await h.waitForStatus('send-welcome-email', runId, 'completed', 120_000);
    assert.equal(run.result?.result['message'], 'welcome email sent');
    assert.equal(h.fake.accepted.length, 1, 'exactly one email');
    const email = await h.emailTo(address);
    assert.equal(email?.status, 'sent');
    assert.equal(run.result?.result['emailId'], email?.email_id);
  },
);
