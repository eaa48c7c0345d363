import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { WorkflowHarness } from '../../../test/support/workflow-harness.ts';
import { until } from '../../../test/support/until.ts';

/** DELETE /api/workflow/:workflowName?runId=… against the real Temporal server and a real worker. */
const h = new WorkflowHarness();
before(async () => {
  await h.start();
  await h.startWorker();
});
after(() => h.stop());

describe('DELETE /api/workflow/:workflowName', () => {
  it('cancels a running run: 202 running with cancelRequested, then the run is cancelled', async () => {
    const userId = `user-${randomUUID()}`;
    await h.insertUser({ _id: userId, email: `${userId}@example.com`, name: 'Ada' });
    // The provider answers 503: the email step waits to retry when the cancel comes.
    h.fake.outage = 503;
    const { body } = await h.trigger('send-welcome-email', { userId });
    const runId = body['runId'] as string;
    await h.waitForStatus('send-welcome-email', runId, 'running');
    await h.fake.waitForRequests(1);

    const res = await h.request('DELETE', `/api/workflow/send-welcome-email?runId=${runId}`);
    assert.equal(res.status, 202);
    assert.deepEqual(res.body, {
      success: true,
      runId,
      workflowName: 'send-welcome-email',
      status: 'running',
      cancelRequested: true,
    });

    const run = await h.waitForStatus('send-welcome-email', runId, 'cancelled');
    assert.equal('result' in run, false);
    assert.equal(run.error, null);
    const user = await h.database.db
      .collection<{ _id: string; welcomeEmailSent?: boolean; welcomeEmailRunId?: string }>('users')
      .findOne({ _id: userId });
    assert.notEqual(user?.welcomeEmailSent, true);
    // The cancelled run released its claim on the welcome email: a later run may send it.
    assert.equal(user?.welcomeEmailRunId, undefined);
    h.fake.reset();
  });

  it('a run whose email is at the provider when cancelled waits for it: sent, it completes and flags the user', async () => {
    const userId = `user-${randomUUID()}`;
    await h.insertUser({ _id: userId, email: `${userId}@example.com`, name: 'Ada' });
    h.fake.reset();
    h.fake.delayMs = 1500;
    const { body } = await h.trigger('send-welcome-email', { userId });
    const runId = body['runId'] as string;
    await h.fake.waitForRequests(1);
    const res = await h.request('DELETE', `/api/workflow/send-welcome-email?runId=${runId}`);
    assert.equal(res.status, 202);
    const run = await h.waitForStatus('send-welcome-email', runId, 'completed');
    assert.equal(run.result?.result['message'], 'welcome email sent');
    assert.ok(run.result?.result['emailId'], 'the email it sent');
    const user = await h.database.db
      .collection<{ _id: string; welcomeEmailSent?: boolean }>('users')
      .findOne({ _id: userId });
    assert.equal(user?.welcomeEmailSent, true);
    assert.equal(h.fake.accepted.length, 1);
    h.fake.reset();
  });

  it('a pending run (no worker yet): 202 pending with cancelRequested; cancelled once a worker takes it', async () => {
    await h.stopWorkers();
    const { body } = await h.trigger('send-welcome-email', { userId: `user-${randomUUID()}` });
    const runId = body['runId'] as string;
    const res = await h.request('DELETE', `/api/workflow/send-welcome-email?runId=${runId}`);
    assert.equal(res.status, 202);
    assert.equal(res.body['status'], 'pending');
    assert.equal(res.body['cancelRequested'], true);
    const meanwhile = await h.status('send-welcome-email', runId);
    assert.equal(meanwhile.body.status, 'pending');
    await h.startWorker();
    await h.waitForStatus('send-welcome-email', runId, 'cancelled');
  });

  it('answers 409 for a run that already closed', async () => {
    const { body } = await h.trigger('send-welcome-email', { userId: 'nobody' });
    const runId = body['runId'] as string;
    await h.waitForStatus('send-welcome-email', runId, 'failed');
    const res = await h.request('DELETE', `/api/workflow/send-welcome-email?runId=${runId}`);
    assert.equal(res.status, 409);
    assert.deepEqual(res.body, { success: false, error: 'workflow run is already closed' });
  });

  it('answers 400 without runId, 404 for an unknown run or another workflow', async () => {
    const missing = await h.request('DELETE', '/api/workflow/send-welcome-email');
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body, { success: false, error: 'runId query parameter is required' });
    const unknown = await h.request('DELETE', `/api/workflow/send-welcome-email?runId=nope-${randomUUID()}`);
    assert.equal(unknown.status, 404);
    assert.deepEqual(unknown.body, { success: false, error: 'workflow run not found' });
    const { body } = await h.trigger('send-welcome-email', { userId: 'nobody' });
    const other = await h.request(
      'DELETE',
      `/api/workflow/send-email-received-ein?runId=${body['runId'] as string}`,
    );
    assert.equal(other.status, 404);
  });
});

describe('cancelRequested', () => {
  // No worker polls this harness's task queue: its runs stay pending, so the
  // state between a DELETE and the run's end can be looked at for as long as needed.
  const idle = new WorkflowHarness();
  before(() => idle.start());
  after(() => idle.stop());

  it('GET shows cancelRequested: true after a DELETE while the run has not ended, without a new status', async () => {
    const { body } = await idle.trigger('send-welcome-email', { userId: `user-${randomUUID()}` });
    const runId = body['runId'] as string;
    const first = await idle.status('send-welcome-email', runId);
    assert.equal(first.body.status, 'pending');
    assert.equal(first.body.cancelRequested, false);

    const res = await idle.request('DELETE', `/api/workflow/send-welcome-email?runId=${runId}`);
    assert.equal(res.status, 202);
    const later = await idle.status('send-welcome-email', runId);
    assert.equal(later.status, 200);
    assert.equal(later.body.status, 'pending');
    assert.equal(later.body.cancelRequested, true);

    await idle.temporal.workflow.getHandle(runId).terminate('test over');
    const closed = await idle.status('send-welcome-email', runId);
    assert.equal(closed.body.status, 'failed');
    assert.equal('cancelRequested' in closed.body, false);
  });

  it('GET shows cancelRequested: true for a running run, though events came after the request', async () => {
    // Running, its email step retrying (the provider is down); then the worker stops, so the
    // workflow task the cancel schedules waits, after the request in the history.
    idle.fake.outage = 503;
    await idle.startWorker();
    const userId = randomUUID();
    await idle.insertUser({ _id: userId, email: `c-${randomUUID()}@example.com` });
    const { body } = await idle.trigger('send-welcome-email', { userId });
    const runId = body['runId'] as string;
    await idle.waitForStatus('send-welcome-email', runId, 'running');
    await until('a first provider attempt', async () => idle.fake.received.length >= 1, 20_000, 50);
    await idle.stopWorkers();
    assert.equal(
      (await idle.request('DELETE', `/api/workflow/send-welcome-email?runId=${runId}`)).status,
      202,
    );
    const later = await idle.status('send-welcome-email', runId);
    assert.equal(later.body.status, 'running');
    assert.equal(later.body.cancelRequested, true);
    await idle.temporal.workflow.getHandle(runId).terminate('test over');
    idle.fake.reset();
  });
});
