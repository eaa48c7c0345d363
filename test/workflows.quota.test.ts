/**
 * A workflow's email step at a provider's maximum rate: the step waits up to
 * 2 s for a slot, then its attempt fails retryably with the rate's wait as
 * the next retry's delay (Temporal's nextRetryDelay), and the retry sends it:
 * once, never twice, never lost.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { authenticatedAs, CALLER_MEMO_KEY } from '../core/identity.ts';
import { welcomeBody } from './support/sample-emails.ts';
import { WorkflowHarness } from './support/workflow-harness.ts';

const h = new WorkflowHarness();
before(async () => {
  await h.start({ SENDGRID_MAX_PER_SECOND: '1' });
  await h.startWorker();
});
after(() => h.stop());

it('an email step over the rate is retried after the rate says, and sent exactly once', async () => {
  h.fake.reset();
  const caller = { companyId: h.caller.companyId, organizationId: randomUUID(), userId: h.caller.userId };
  // Sends keep every slot of the next 2 s taken until the step is seen on its second attempt,
  // however late the worker picks the step up (a fixed 6 s of sending once ended before a loaded
  // machine's worker ran the step): its first attempt finds no slot within the 2 s it waits, and
  // fails retryably. Five senders asking again 25 ms after a refusal: a slot entering the 2 s
  // window is taken before the step can ask for it, even when a busy machine is slow to send
  // (three senders asking every 100 ms left gaps when the whole suite ran).
  let busy = true;
  const keepBusy = setTimeout(() => (busy = false), 60_000);
  const burst = Array.from({ length: 5 }, async () => {
    while (busy) {
      const sent = await h.email
        .send(welcomeBody({ to: `b-${randomUUID()}@example.com` }), authenticatedAs(caller))
        .then(() => true)
        .catch(() => false);
      if (!sent) await new Promise((r) => setTimeout(r, 25));
    }
  });
  await new Promise((r) => setTimeout(r, 300));
  const handle = await h.temporal.workflow.start('sendEmailReceivedEin', {
    taskQueue: h.taskQueue,
    workflowId: `send-email-received-ein-${randomUUID()}`,
    args: [{ ...caller, emailAction: 'ein-received', recipients: ['owner@example.com'] }],
    memo: { [CALLER_MEMO_KEY]: caller },
  });
  const finished = handle.result().finally(() => (busy = false));
  finished.catch(() => undefined); // awaited below; a failed run fails the test there
  while (busy) {
    const { raw } = await handle.describe();
    if (raw.pendingActivities?.some((a) => (a.attempt ?? 1) >= 2)) busy = false;
    else await new Promise((r) => setTimeout(r, 100));
  }
  const result = (await finished) as { emailId: string };
  await Promise.all(burst);
  clearTimeout(keepBusy);

  const toStep = h.fake.accepted.filter((m) => m.body.custom_args?.['email_id'] === result.emailId);
  assert.equal(toStep.length, 1, 'sent once');
  const status = await h.email.getStatus(result.emailId, authenticatedAs(caller));
  assert.equal(status.status, 'sent');

  const history = await handle.fetchHistory();
  const attempts = (history.events ?? []).flatMap((e) =>
    e.activityTaskStartedEventAttributes ? [e.activityTaskStartedEventAttributes.attempt ?? 1] : [],
  );
  assert.ok(Math.max(...attempts) >= 2, `the step was retried (attempts ${attempts.join(',')})`);
});
