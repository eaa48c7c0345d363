import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { deepestMessage } from '../api/routes/workflow/run-status.ts';
import { CALLER_MEMO_KEY } from '../core/identity.ts';
import {
  cancelDuring,
  executeWithStubs,
  stubActivities,
  useTestEnvironment,
  type StubbedActivities,
} from '../test/support/stub-activities.ts';

/** The EIN workflow's one step, with stubbed activities: what it sends, and giving up. */

const env = useTestEnvironment();

const input = {
  userId: randomUUID(),
  companyId: randomUUID(),
  organizationId: randomUUID(),
  emailAction: 'ein-verified',
  recipientName: 'Grace',
  recipients: ['owner@example.com'],
  ccs: ['cfo@example.com'],
  resource_id_ref: 'ein-42',
};

const runEin = (stubs: StubbedActivities) =>
  executeWithStubs(env.current, 'sendEmailReceivedEin', input, stubs);

describe('sendEmailReceivedEin (stubbed activities)', () => {
  it('sends the chosen notification as the identity of the input, with a per-run key', async () => {
    const stubs = stubActivities({});
    const { value, workflowId } = await runEin(stubs);
    assert.deepEqual(value, { message: 'ein email sent', emailAction: 'ein-verified', emailId: 'email-1' });
    assert.deepEqual(stubs.names(), ['deliverEinEmail']);
    assert.deepEqual(stubs.argsOf('deliverEinEmail'), [
      {
        idempotencyKey: `${workflowId}:ein-email`,
        emailAction: 'ein-verified',
        recipients: ['owner@example.com'],
        ccs: ['cfo@example.com'],
        recipientName: 'Grace',
        resourceIdRef: 'ein-42',
        caller: { companyId: input.companyId, organizationId: input.organizationId, userId: input.userId },
      },
      // The run's audience: the send also says whether anyone hears the run's completion.
      { companyId: null, organizationId: null, test: false },
    ]);
  });

  it("tells workflow.completed only when the send says an endpoint of the run's company hears it", async () => {
    const caller = { companyId: input.companyId, organizationId: input.organizationId, userId: input.userId };
    const memo = { [CALLER_MEMO_KEY]: caller };
    const heard = stubActivities({});
    await executeWithStubs(env.current, 'sendEmailReceivedEin', input, heard, memo);
    assert.deepEqual(heard.names(), ['deliverEinEmail', 'emitWorkflowEvent']);
    assert.deepEqual(heard.argsOf('deliverEinEmail')?.[1], {
      companyId: caller.companyId,
      organizationId: caller.organizationId,
      test: false,
    });
    const unheard = stubActivities({
      deliverEinEmail: async () => ({ emailId: 'email-1', providerId: 'provider-1', outcomeHeard: false }),
    });
    const { value } = await executeWithStubs(env.current, 'sendEmailReceivedEin', input, unheard, memo);
    assert.equal(value?.['message'], 'ein email sent');
    assert.deepEqual(unheard.names(), ['deliverEinEmail']);
  });

  it('marks the email failed and fails the run when the send fails for good', async () => {
    const stubs = stubActivities({
      deliverEinEmail: async () => {
        throw ApplicationFailure.nonRetryable('unauthorized', 'unauthorized');
      },
    });
    const { error, workflowId } = await runEin(stubs);
    assert.equal(deepestMessage(error), 'unauthorized');
    assert.deepEqual(stubs.names(), ['deliverEinEmail', 'markEmailFailed']);
    assert.deepEqual(stubs.argsOf('markEmailFailed'), [`${workflowId}:ein-email`, 'unauthorized']);
  });

  it('a cancel that arrives after the email was sent does not undo the run: it completes, reported so', async () => {
    // Requested while the run reports its completion (a local activity): the email is out.
    const caller = { companyId: input.companyId, organizationId: input.organizationId, userId: input.userId };
    const outcome = await cancelDuring(env.current, 'sendEmailReceivedEin', input, 'emitWorkflowEvent', {
      memo: { [CALLER_MEMO_KEY]: caller },
    });
    assert.equal(outcome.error, undefined, String(outcome.error));
    assert.deepEqual(outcome.value, {
      message: 'ein email sent',
      emailAction: 'ein-verified',
      emailId: 'email-1',
    });
    const [type] = outcome.stubs.argsOf('emitWorkflowEvent') as [string];
    assert.equal(type, 'workflow.completed');
  });
});
