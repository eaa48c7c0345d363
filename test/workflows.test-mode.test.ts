/**
 * A run started by a test-mode key (its memo's caller says `test: true`, as
 * the gateway writes it) sends in test mode: recorded, never at the provider.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { CALLER_MEMO_KEY } from '../core/identity.ts';
import { WorkflowHarness } from './support/workflow-harness.ts';

const h = new WorkflowHarness();
before(async () => {
  await h.start();
  await h.startWorker();
});
after(() => h.stop());

it('an EIN run of a test-mode caller sends a test email: recorded, provider never called', async () => {
  h.fake.reset();
  const caller = {
    companyId: h.caller.companyId,
    organizationId: randomUUID(),
    userId: h.caller.userId,
    test: true,
  };
  const handle = await h.temporal.workflow.start('sendEmailReceivedEin', {
    taskQueue: h.taskQueue,
    workflowId: `send-email-received-ein-${randomUUID()}`,
    args: [
      { ...caller, test: undefined, emailAction: 'ein-received', recipients: ['delivered@example.com'] },
    ],
    memo: { [CALLER_MEMO_KEY]: caller },
  });
  const result = (await handle.result()) as { emailId: string };
  const record = await h.database.db
    .collection<{ _id: string; test?: boolean; provider?: string; status_rank: number }>('emails')
    .findOne({ _id: result.emailId });
  assert.equal(record?.test, true);
  assert.equal(record?.provider, 'test');
  assert.equal(record?.status_rank, 2, 'delivered, as delivered@ says');
  assert.equal(h.fake.received.length, 0);
});

it("a welcome run of a test-mode caller sends a test email and leaves the user's live welcome alone", async () => {
  h.fake.reset();
  const userId = `user-${randomUUID()}`;
  await h.insertUser({ _id: userId, email: `${userId}@example.com`, name: 'Ada' });
  const caller = { ...h.caller, organizationId: randomUUID(), test: true };
  const runTest = async () => {
    const handle = await h.temporal.workflow.start('sendWelcomeEmail', {
      taskQueue: h.taskQueue,
      workflowId: `send-welcome-email-${randomUUID()}`,
      args: [{ userId }],
      memo: { [CALLER_MEMO_KEY]: caller },
    });
    return (await handle.result()) as { message: string; emailId: string };
  };
  const [first, second] = [await runTest(), await runTest()];
  assert.equal(first.message, 'welcome email sent');
  assert.notEqual(first.emailId, second.emailId, 'each test run sends its own test email');
  const records = h.database.db.collection<{ _id: string; test?: boolean }>('emails');
  assert.equal((await records.findOne({ _id: first.emailId }))?.test, true);
  const user = await h.database.db
    .collection<{ _id: string; welcomeEmailSent?: boolean; welcomeEmailKey?: string }>('users')
    .findOne({ _id: userId });
  assert.equal(user?.welcomeEmailSent, undefined, 'the live flag is untouched');
  assert.equal(user?.welcomeEmailKey, undefined);
  assert.equal(h.fake.received.length, 0);

  // The live run still sends the user's one welcome email.
  const live = await h.trigger('send-welcome-email', { userId });
  const run = await h.waitForStatus('send-welcome-email', live.body['runId'] as string, 'completed');
  assert.equal(run.result?.result['message'], 'welcome email sent');
  assert.equal(h.fake.accepted.length, 1);
});
