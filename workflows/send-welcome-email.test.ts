import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { WorkflowFailedError } from '@temporalio/client';
import { CancelledFailure } from '@temporalio/common';
import { CALLER_MEMO_KEY } from '../core/identity.ts';
import {
  cancelDuring,
  executeWithStubs,
  startStubWorker,
  stubActivities,
  useTestEnvironment,
  type StubbedActivities,
} from '../test/support/stub-activities.ts';
import { deepestMessage } from '../api/routes/workflow/run-status.ts';

/**
 * The welcome workflow's decisions with stubbed activities (no HTTP, database
 * or provider), on the test run's Temporal server: which steps run, with what,
 * and what happens when a step fails for good or the run is cancelled.
 */

const env = useTestEnvironment();

const user = { email: 'ada@example.com', name: 'Ada' };
/** The claim step's answer when the claim is ours (the user read in the same step). */
const claimed = (runId: string) => ({
  claim: 'claimed' as const,
  idempotencyKey: `${runId}:welcome-email`,
  ...user,
});

const runWelcome = (stubs: StubbedActivities, memo: Record<string, unknown> = {}) =>
  executeWithStubs(env.current, 'sendWelcomeEmail', { userId: 'u-1' }, stubs, memo);

describe('sendWelcomeEmail (stubbed activities)', () => {
  it('claims, sends with a per-run key and the caller from the memo, then sets the flag', async () => {
    const stubs = stubActivities({ claimUserWelcomeEmail: async (_userId, runId) => claimed(runId) });
    const caller = { companyId: randomUUID(), organizationId: randomUUID(), userId: randomUUID() };
    const { value, workflowId } = await runWelcome(stubs, { [CALLER_MEMO_KEY]: caller });
    assert.deepEqual(value, { message: 'welcome email sent', userId: 'u-1', emailId: 'email-1' });
    assert.deepEqual(stubs.names(), [
      'claimUserWelcomeEmail',
      'deliverWelcomeEmail',
      'markWelcomeEmailSent',
      'emitWorkflowEvent',
    ]);
    // The run's end goes to the company's webhook endpoints (report-outcome.ts).
    const [type, data] = stubs.argsOf('emitWorkflowEvent') as [string, Record<string, unknown>];
    assert.equal(type, 'workflow.completed');
    assert.equal(data['company_id'], caller.companyId);
    assert.equal(data['workflow_name'], 'send-welcome-email');
    assert.deepEqual(data['result'], value);
    // The user steps get the caller's company: another company's user is "not found".
    assert.deepEqual(stubs.argsOf('claimUserWelcomeEmail'), ['u-1', workflowId, caller.companyId]);
    // The flag step also gets the run's audience, to say whether anyone hears the run's end.
    assert.deepEqual(stubs.argsOf('markWelcomeEmailSent'), [
      'u-1',
      caller.companyId,
      { companyId: caller.companyId, organizationId: caller.organizationId, test: false },
    ]);
    // The send and the run's end for webhooks are tasks of Temporal's activity
    // queue (an event is told only from a workflow task the server accepted:
    // report-outcome.ts); the database steps ran as local activities, recorded
    // as markers (what the Web UI shows): claim and flag.
    const events = (await env.current.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
    const scheduled = events.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
    assert.deepEqual(scheduled, ['deliverWelcomeEmail', 'emitWorkflowEvent']);
    const markers = events.flatMap((e) => e.markerRecordedEventAttributes?.markerName ?? []);
    assert.deepEqual(markers.filter((m) => m === 'core_local_activity').length, 2);
    assert.deepEqual(stubs.argsOf('deliverWelcomeEmail'), [
      {
        idempotencyKey: `${workflowId}:welcome-email`,
        userId: 'u-1',
        email: 'ada@example.com',
        name: 'Ada',
        caller,
      },
    ]);
  });

  it('a test-mode caller: reads the user and sends under its own key, no claim and no flag', async () => {
    const stubs = stubActivities({});
    const caller = {
      companyId: randomUUID(),
      organizationId: randomUUID(),
      userId: randomUUID(),
      test: true,
    };
    const { value, workflowId } = await runWelcome(stubs, { [CALLER_MEMO_KEY]: caller });
    assert.equal(value?.['message'], 'welcome email sent');
    assert.deepEqual(stubs.names(), ['readWelcomeUser', 'deliverWelcomeEmail', 'emitWorkflowEvent']);
    assert.deepEqual(stubs.argsOf('readWelcomeUser'), ['u-1', caller.companyId]);
    const [request] = stubs.argsOf('deliverWelcomeEmail') as [Record<string, unknown>];
    assert.equal(request['idempotencyKey'], `${workflowId}:welcome-email`);
    assert.deepEqual(request['caller'], caller);
  });

  it('completes without the workflow.completed step when its last step says no endpoint hears it', async () => {
    const caller = { companyId: randomUUID() };
    const unheard = stubActivities({
      claimUserWelcomeEmail: async (_userId, runId) => claimed(runId),
      markWelcomeEmailSent: async () => ({ outcomeHeard: false }),
    });
    const { value, workflowId } = await runWelcome(unheard, { [CALLER_MEMO_KEY]: caller });
    assert.equal(value?.['message'], 'welcome email sent');
    assert.deepEqual(unheard.names(), [
      'claimUserWelcomeEmail',
      'deliverWelcomeEmail',
      'markWelcomeEmailSent',
    ]);
    assert.deepEqual(unheard.argsOf('markWelcomeEmailSent')?.[2], {
      companyId: caller.companyId,
      organizationId: null,
      test: false,
    });
    const events = (await env.current.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
    const markers = events.flatMap((e) => e.markerRecordedEventAttributes?.markerName ?? []);
    assert.equal(markers.filter((m) => m === 'core_local_activity').length, 2, 'claim and flag only');

    // A flag step that gives no answer (as in histories recorded before it gave one): emitted as before.
    const silent = stubActivities({
      claimUserWelcomeEmail: async (_userId, runId) => claimed(runId),
      markWelcomeEmailSent: (async () =>
        undefined) as unknown as StubbedActivities['activities']['markWelcomeEmailSent'],
    });
    await runWelcome(silent, { [CALLER_MEMO_KEY]: caller });
    assert.deepEqual(silent.names().at(-1), 'emitWorkflowEvent');
    assert.equal(silent.argsOf('emitWorkflowEvent')?.[0], 'workflow.completed');
  });

  it('sends nothing when the flag is already set, or another run holds the claim', async () => {
    const flagged = stubActivities({ claimUserWelcomeEmail: async () => ({ claim: 'already-sent' }) });
    assert.equal((await runWelcome(flagged)).value?.['message'], 'welcome email already sent');
    assert.deepEqual(flagged.names(), ['claimUserWelcomeEmail']);

    const busy = stubActivities({ claimUserWelcomeEmail: async () => ({ claim: 'in-progress' }) });
    assert.equal((await runWelcome(busy)).value?.['message'], 'welcome email already in progress');
    assert.deepEqual(busy.names(), ['claimUserWelcomeEmail']);
  });

  it('sends under the key the claim hands over (a claim taken over from an earlier run)', async () => {
    const stubs = stubActivities({ claimUserWelcomeEmail: async () => claimed('earlier-run') });
    const { value } = await runWelcome(stubs);
    assert.equal(value?.['message'], 'welcome email sent');
    const [request] = (stubs.argsOf('deliverWelcomeEmail') ?? []) as Array<{ idempotencyKey: string }>;
    assert.equal(request?.idempotencyKey, 'earlier-run:welcome-email');
  });

  it('fails with the step’s message for an unknown user, without a retry or any other step', async () => {
    const stubs = stubActivities({
      claimUserWelcomeEmail: async () => {
        throw ApplicationFailure.nonRetryable('user not found: u-1', 'not_found');
      },
    });
    const { error } = await runWelcome(stubs);
    assert.ok(error instanceof WorkflowFailedError);
    assert.equal(deepestMessage(error), 'user not found: u-1');
    assert.deepEqual(stubs.names(), ['claimUserWelcomeEmail']);
  });

  it('a send that fails for good marks the email failed, releases the claim and fails the run', async () => {
    const stubs = stubActivities({
      claimUserWelcomeEmail: async (_userId, runId) => claimed(runId),
      deliverWelcomeEmail: async () => {
        throw ApplicationFailure.nonRetryable(
          'email provider rejected the message: bad from',
          'provider_rejected',
        );
      },
    });
    const { error, workflowId } = await runWelcome(stubs);
    assert.equal(deepestMessage(error), 'email provider rejected the message: bad from');
    assert.deepEqual(stubs.names(), [
      'claimUserWelcomeEmail',
      'deliverWelcomeEmail',
      'markEmailFailed',
      'releaseWelcomeEmail',
    ]);
    assert.deepEqual(stubs.argsOf('markEmailFailed'), [
      `${workflowId}:welcome-email`,
      'email provider rejected the message: bad from',
    ]);
    assert.deepEqual(stubs.argsOf('releaseWelcomeEmail'), ['u-1', workflowId]);
  });

  it('a run cancelled during the send calls the email off, releases its claim and ends cancelled', async () => {
    let sending!: () => void;
    const started = new Promise<void>((resolve) => (sending = resolve));
    const stubs = stubActivities({
      claimUserWelcomeEmail: async (_userId, runId) => claimed(runId),
      // Holds the send "at the provider" until Temporal delivers the cancellation.
      deliverWelcomeEmail: async () => {
        sending();
        const ctx = Context.current();
        while (!ctx.cancellationSignal.aborted) {
          ctx.heartbeat();
          await ctx.sleep(100).catch(() => undefined);
        }
        throw new CancelledFailure('cancelled at the provider');
      },
    });
    const { worker, taskQueue } = await startStubWorker(env.current, stubs.activities);
    const workflowId = `welcome-${randomUUID()}`;
    const outcome = await worker.runUntil(async () => {
      const handle = await env.current.client.workflow.start('sendWelcomeEmail', {
        taskQueue,
        workflowId,
        args: [{ userId: 'u-1' }],
      });
      await started;
      await handle.cancel();
      return handle.result().then(
        () => 'completed',
        (err: unknown) =>
          err instanceof WorkflowFailedError && err.cause instanceof CancelledFailure
            ? 'cancelled'
            : String(err),
      );
    });
    assert.equal(outcome, 'cancelled');
    assert.ok(stubs.names().includes('releaseWelcomeEmail'));
    // Not "failed for good": the core decides, under the send's lease, whether
    // the email can still be called off (one being sent may still complete).
    assert.ok(!stubs.names().includes('markEmailFailed'));
    assert.deepEqual(stubs.argsOf('callOffEmail'), [`${workflowId}:welcome-email`]);
    const callOff = stubs.names().indexOf('callOffEmail');
    assert.ok(
      callOff >= 0 && callOff < stubs.names().indexOf('releaseWelcomeEmail'),
      'before the claim goes',
    );
    assert.ok(!stubs.names().includes('markWelcomeEmailSent'));
  });

  it('a cancel that arrives once the email is sent still sets the flag: the run completes', async () => {
    const outcome = await cancelDuring(
      env.current,
      'sendWelcomeEmail',
      { userId: 'u-1' },
      'markWelcomeEmailSent',
      {
        overrides: { claimUserWelcomeEmail: async (_userId, runId) => claimed(runId) },
      },
    );
    assert.equal(outcome.error, undefined, String(outcome.error));
    assert.equal((outcome.value as Record<string, unknown>)['message'], 'welcome email sent');
    assert.ok(!outcome.stubs.names().includes('releaseWelcomeEmail'), 'the claim is kept: the flag is set');
  });

  it('a cancel requested while a step fails: the run tells webhooks one outcome, the one it ended with', async () => {
    // The cancel reaches the server while the run's first workflow task works on a failing step:
    // an event told from inside that task (a local activity) would be told again, otherwise, from
    // the task the server has the run take instead (report-outcome.ts).
    const caller = { companyId: randomUUID(), organizationId: randomUUID(), userId: randomUUID() };
    const outcome = await cancelDuring(
      env.current,
      'sendWelcomeEmail',
      { userId: 'u-1' },
      'claimUserWelcomeEmail',
      {
        overrides: {
          claimUserWelcomeEmail: async () => {
            throw ApplicationFailure.nonRetryable('user not found: u-1', 'not_found');
          },
        },
        memo: { [CALLER_MEMO_KEY]: caller },
      },
    );
    const told = outcome.stubs.names().filter((name) => name === 'emitWorkflowEvent');
    assert.equal(told.length, 1, `events told: ${outcome.stubs.names().join(', ')}`);
    const [type] = outcome.stubs.argsOf('emitWorkflowEvent') as [string];
    const ended =
      outcome.error instanceof WorkflowFailedError && outcome.error.cause instanceof CancelledFailure
        ? 'workflow.cancelled'
        : 'workflow.failed';
    assert.ok(outcome.error, 'the run did not complete');
    assert.equal(type, ended);
  });
});
