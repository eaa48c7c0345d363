import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { WorkflowHarness } from '../../../test/support/workflow-harness.ts';
import { until } from '../../../test/support/until.ts';

/**
 * GET /api/workflow/:workflowName?runId=… against the real Temporal server.
 * No worker runs until a test starts one, so `pending` is observed for real.
 */
const h = new WorkflowHarness();
before(() => h.start());
after(() => h.stop());

async function newUser(): Promise<string> {
  const _id = `user-${randomUUID()}`;
  await h.insertUser({ _id, email: `${_id}@example.com`, name: 'Ada' });
  return _id;
}

describe('GET /api/workflow/:workflowName', () => {
  it('answers 400 without runId', async () => {
    const res = await h.request('GET', '/api/workflow/send-welcome-email');
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { success: false, error: 'runId query parameter is required' });
  });

  it('answers 404 for an unknown run and for an unknown workflow name', async () => {
    const res = await h.status('send-welcome-email', `send-welcome-email-${randomUUID()}`);
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { success: false, error: 'workflow run not found' });
    const unknown = await h.status('no-such-workflow', 'x');
    assert.equal(unknown.status, 404);
    assert.deepEqual(unknown.body, { success: false, error: "workflow 'no-such-workflow' not found" });
  });

  it('answers 404 for a run of another workflow', async () => {
    const { body } = await h.trigger('send-welcome-email', { userId: 'u-other' });
    const res = await h.status('send-email-received-ein', body['runId'] as string);
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { success: false, error: 'workflow run not found' });
    await h.temporal.workflow.getHandle(body['runId'] as string).terminate('test cleanup');
  });

  it("answers 404 for another company's run", async () => {
    const companyId = randomUUID();
    const { body } = await h.trigger(
      'send-welcome-email',
      { userId: 'u-tenant' },
      { 'X-Company-Id': companyId },
    );
    const runId = body['runId'] as string;
    const path = `/api/workflow/send-welcome-email?runId=${runId}`;
    const own = await h.request('GET', path, undefined, { 'X-Company-Id': companyId });
    assert.equal(own.status, 200);
    for (const headers of [{}, { 'X-Company-Id': randomUUID() }] as Array<Record<string, string>>) {
      const other = await h.request('GET', path, undefined, headers);
      assert.equal(other.status, 404);
      assert.deepEqual(other.body, { success: false, error: 'workflow run not found' });
      const cancel = await h.request('DELETE', path, undefined, headers);
      assert.equal(cancel.status, 404);
    }
    await h.temporal.workflow.getHandle(runId).terminate('test cleanup');
  });

  it('shows pending while no worker has picked the run up, then running, then completed', async () => {
    const userId = await newUser();
    const { body } = await h.trigger('send-welcome-email', { userId });
    const runId = body['runId'] as string;

    const pending = await h.status('send-welcome-email', runId);
    assert.equal(pending.status, 200);
    assert.equal(pending.body.status, 'pending');
    assert.equal('result' in pending.body, false);
    assert.equal(pending.body.error, null);
    assert.equal(pending.body.runId, runId);
    assert.equal(pending.body.workflowName, 'send-welcome-email');
    assert.ok(!Number.isNaN(Date.parse(pending.body.createdAt)));

    // Hold the email step at the provider so `running` can be seen.
    h.fake.delayMs = 2500;
    await h.startWorker();
    const running = await h.waitForStatus('send-welcome-email', runId, 'running');
    assert.equal('result' in running, false);
    assert.ok(Date.parse(running.updatedAt) >= Date.parse(pending.body.updatedAt));

    const done = await h.waitForStatus('send-welcome-email', runId, 'completed');
    assert.equal(done.result?.result['message'], 'welcome email sent');
    assert.equal(done.error, null);
    assert.equal(done.createdAt, pending.body.createdAt);
    assert.ok(Date.parse(done.updatedAt) > Date.parse(done.createdAt));
    h.fake.reset();
  });

  it('moves updatedAt on with each retry of a step, though Temporal records none in the history', async () => {
    await h.startWorker();
    h.fake.outage = 503;
    try {
      const userId = await newUser();
      const { body } = await h.trigger('send-welcome-email', { userId });
      const runId = body['runId'] as string;
      await until('a first provider attempt', async () => h.fake.received.length >= 1, 20_000, 50);
      await sleep(200);
      const first = (await h.status('send-welcome-email', runId)).body;
      // Retried 1 s and then 2 s later (workflows/retry-policy.ts): the third attempt.
      await until('a third provider attempt', async () => h.fake.received.length >= 3, 20_000, 50);
      await sleep(200);
      const later = (await h.status('send-welcome-email', runId)).body;
      assert.equal(later.status, 'running');
      assert.ok(
        Date.parse(later.updatedAt) - Date.parse(first.updatedAt) >= 2500,
        `updatedAt ${first.updatedAt} then ${later.updatedAt}`,
      );
      await h.temporal.workflow.getHandle(runId).terminate('test cleanup');
    } finally {
      h.fake.reset();
    }
  });

  it('shows failed with the deepest cause and no result', async () => {
    await h.startWorker();
    const { body } = await h.trigger('send-welcome-email', { userId: 'nobody' });
    const run = await h.waitForStatus('send-welcome-email', body['runId'] as string, 'failed');
    assert.equal(run.error, 'user not found: nobody');
    assert.equal('result' in run, false);
  });

  it('shows a terminated run as failed', async () => {
    const { body } = await h.trigger('send-welcome-email', { userId: 'u-terminated' });
    await h.temporal.workflow.getHandle(body['runId'] as string).terminate('stopped by operator');
    const res = await h.status('send-welcome-email', body['runId'] as string);
    assert.equal(res.body.status, 'failed');
    assert.equal(res.body.error, 'workflow terminated: stopped by operator');
  });
});
