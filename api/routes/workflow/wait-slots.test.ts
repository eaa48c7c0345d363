import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { WorkflowHarness } from '../../../test/support/workflow-harness.ts';

/**
 * WORKFLOW_WAITS_PER_COMPANY: one company's open `?wait=` requests are
 * bounded per gateway; past the bound a request is answered at once, and
 * another company's waits are not affected. No worker: runs stay pending.
 */
const h = new WorkflowHarness();
before(() => h.start({ WORKFLOW_WAITS_PER_COMPANY: '2' }));
after(() => h.stop());

const WELCOME = 'send-welcome-email';
const waitPath = (runId: string, wait: number) =>
  `/api/workflow/${WELCOME}?runId=${encodeURIComponent(runId)}&wait=${wait}`;

it("past the company's open waits a request is answered at once; another company still waits", async () => {
  const runId = (await h.trigger(WELCOME, { userId: `user-${randomUUID()}` })).body['runId'] as string;
  const waiting = [h.request('GET', waitPath(runId, 4)), h.request('GET', waitPath(runId, 4))];
  await new Promise((r) => setTimeout(r, 300)); // both holding their slots
  const third = h.request('GET', waitPath(runId, 4));
  const first = await Promise.race([
    third.then(() => 'third'),
    ...waiting.map((w) => w.then(() => 'waiting')),
  ]);
  assert.equal(first, 'third', 'the third was answered before the two that wait');
  const answer = await third;
  assert.equal(answer.status, 200);
  assert.equal(answer.body['status'], 'pending');

  // Another company's run and wait: its own slots.
  const other = {
    'x-company-id': randomUUID(),
    'x-organization-id': randomUUID(),
    'x-user-id': randomUUID(),
  };
  const theirs = (await h.trigger(WELCOME, { userId: `user-${randomUUID()}` }, other)).body[
    'runId'
  ] as string;
  const started = Date.now();
  const res = await h.request('GET', waitPath(theirs, 1), undefined, other);
  assert.equal(res.status, 200);
  assert.ok(Date.now() - started >= 900, 'it waited');
  assert.ok((await Promise.all(waiting)).every((w) => w.status === 200));
  // The slots are given back: the company waits again.
  const again = Date.now();
  await h.request('GET', waitPath(runId, 1));
  assert.ok(Date.now() - again >= 900, 'waited once the slots were free');
});
