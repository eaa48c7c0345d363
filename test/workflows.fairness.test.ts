/**
 * One company's backlog does not hold up another's runs: runs carry their
 * company as Temporal fairness key, and the server (started by the test run
 * with task queue fairness on, as docker compose starts it) dispatches the
 * companies' tasks in turns. Real Temporal, a real worker with one slot of
 * each kind, a provider that takes 150 ms a message.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { CALLER_MEMO_KEY } from '../core/identity.ts';
import { WorkflowHarness } from './support/workflow-harness.ts';
import { until } from './support/until.ts';

const h = new WorkflowHarness();
before(async () => {
  await h.start({ WORKER_CONCURRENCY: '1' });
  await h.startWorker();
});
after(() => h.stop());

const company = () => {
  const ids = { companyId: randomUUID(), organizationId: randomUUID(), userId: randomUUID() };
  const headers = {
    'x-company-id': ids.companyId,
    'x-organization-id': ids.organizationId,
    'x-user-id': ids.userId,
  };
  return { ids, headers };
};
const einRun = (ids: ReturnType<typeof company>['ids'], to: string) => ({
  ...ids,
  emailAction: 'ein-received',
  recipients: [to],
});

describe('fair turns between companies on the task queue', () => {
  it('a run of company B, triggered behind 30 of company A, is served in its turn, not after A’s backlog', async () => {
    h.fake.delayMs = 150;
    const a = company();
    const b = company();
    const triggered = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        h.trigger('send-email-received-ein', einRun(a.ids, `a-${i}@example.com`), a.headers),
      ),
    );
    assert.deepEqual(new Set(triggered.map((t) => t.status)), new Set([202]));
    const queuedBefore = h.fake.accepted.length;
    const mine = await h.trigger('send-email-received-ein', einRun(b.ids, 'b@example.com'), b.headers);
    assert.equal(mine.status, 202);
    const sentTo = () => h.fake.accepted.map((m) => m.body.personalizations[0]!.to[0]!.email);
    await until('B’s email', async () => sentTo().includes('b@example.com'), 60_000);
    const order = sentTo();
    const position = order.indexOf('b@example.com');
    // First in, first out, B's email would follow the A emails queued before it (about 30).
    assert.ok(
      position - queuedBefore <= 8,
      `B's email was sent after ${position - queuedBefore} of A's queued emails (order: ${order.join(' ')})`,
    );
    await until('A’s emails', async () => h.fake.accepted.length === 31, 60_000);
    h.fake.delayMs = 0;
  });

  it('a run started without a fairness key (by a schedule older than the keys) sends in its caller’s company’s turn', async () => {
    const { ids } = company();
    const workflowId = `fairness-${randomUUID()}`;
    const handle = await h.temporal.workflow.start('sendEmailReceivedEin', {
      taskQueue: h.taskQueue,
      workflowId,
      args: [einRun(ids, 'scheduled@example.com')],
      memo: { [CALLER_MEMO_KEY]: ids },
    });
    await handle.result();
    const history = await handle.fetchHistory();
    const send = history.events?.find(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'deliverEinEmail',
    );
    assert.equal(send?.activityTaskScheduledEventAttributes?.priority?.fairnessKey, ids.companyId);
  });

  it('a triggered run carries its company as fairness key (visible on its start in the Web UI)', async () => {
    const a = company();
    const res = await h.trigger('send-email-received-ein', einRun(a.ids, 'keyed@example.com'), a.headers);
    const history = await h.temporal.workflow.getHandle(res.body['runId'] as string).fetchHistory();
    const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
    assert.equal(started?.priority?.fairnessKey, a.ids.companyId);
  });
});
