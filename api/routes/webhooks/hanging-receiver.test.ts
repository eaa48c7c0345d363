/**
 * A company's endpoint that accepts connections and never answers: each POST
 * to it holds a delivery slot until WEBHOOK_TIMEOUT_SECONDS. Those slots are
 * the webhook deliveries' own task queue's (worker/create-worker.ts), so the
 * email steps of everyone's runs go on meanwhile; on one shared queue, three
 * hanging batches took both of this worker's activity slots and a welcome
 * run waited for them to time out.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { invoiceBody } from '../../../test/support/sample-emails.ts';
import { until } from '../../../test/support/until.ts';
import { WorkflowHarness } from '../../../test/support/workflow-harness.ts';

const h = new WorkflowHarness();
/** Accepts every connection, reads nothing back, answers nothing. */
const open = new Set<Socket>();
let closedEarly = 0;
let tarpit: Server;

before(async () => {
  tarpit = createServer((socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket) && closedEarly++);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => tarpit.listen(0, '127.0.0.1', resolve));
  await h.start({
    WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.1',
    WORKER_CONCURRENCY: '2',
    WEBHOOK_TIMEOUT_SECONDS: '60',
  });
  await h.startWorker();
});
after(async () => {
  await h.stop();
  for (const socket of open) socket.destroy();
  await new Promise((resolve) => tarpit.close(resolve));
});

it('a receiver that never answers does not hold up another company’s run', { timeout: 120_000 }, async () => {
  // Company A: three endpoints on the tarpit (a batch each), and sends that give them events.
  const url = `http://127.0.0.1:${(tarpit.address() as AddressInfo).port}/hook`;
  const organization = { 'x-organization-id': randomUUID() };
  for (let i = 0; i < 3; i++) {
    const res = await h.request('POST', '/api/webhooks', { url, events: ['email.sent'] });
    assert.equal(res.status, 201, JSON.stringify(res.body));
  }
  for (let i = 0; i < 3; i++) {
    const res = await h.request(
      'POST',
      '/api/email/send',
      invoiceBody({ to: `a${i}@example.com` }),
      organization,
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
  }
  // Batches' POSTs wait on the tarpit in as many activities as the worker has slots (2); a third waits.
  await until('two POSTs hanging on the receiver', async () => open.size >= 2, 60_000);

  // Company B's run: its steps need an activity slot now.
  const companyB = { 'x-company-id': randomUUID(), 'x-user-id': randomUUID() };
  const userId = `user-${randomUUID()}`;
  await h.insertUser({ _id: userId, email: `${userId}@example.com`, name: 'Bea' });
  const { body } = await h.trigger('send-welcome-email', { userId }, companyB);
  const run = await h.waitForStatus(
    'send-welcome-email',
    body['runId'] as string,
    'completed',
    60_000,
    companyB,
  );
  assert.equal(run.result?.result['message'], 'welcome email sent');
  // Completed while every POST to the tarpit still waited (their timeout is 60 s).
  assert.equal(closedEarly, 0, 'a hanging POST ended before the run completed');
  assert.ok(open.size >= 2);
});
