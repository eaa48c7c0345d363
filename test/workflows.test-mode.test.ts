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
