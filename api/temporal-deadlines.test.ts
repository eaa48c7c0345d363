import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { Client } from '@temporalio/client';
import { WorkflowHarness } from '../test/support/workflow-harness.ts';
import { temporalError } from './routes/workflow/temporal-errors.ts';
import { gatewayTemporalConnection, withinDeadline } from './temporal-deadlines.ts';

/**
 * The gateway's Temporal calls end by their deadlines without the SDK's
 * withDeadline/withAbortSignal, whose AsyncLocalStorage would slow every
 * request of the process once entered (temporal-deadlines.ts).
 */

/** A "Temporal" that accepts connections and never answers a byte. */
async function silentServer(): Promise<{ address: string; close(): Promise<void> }> {
  const sockets: Socket[] = [];
  const server: Server = createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    address: `127.0.0.1:${port}`,
    close: async () => {
      sockets.forEach((s) => s.destroy());
      await new Promise((r) => server.close(r));
    },
  };
}

async function timed<T>(call: () => Promise<T>): Promise<{ err: unknown; ms: number }> {
  const started = Date.now();
  try {
    await call();
    return { err: undefined, ms: Date.now() - started };
  } catch (err) {
    return { err, ms: Date.now() - started };
  }
}

describe('a Temporal that never answers', () => {
  let silent: Awaited<ReturnType<typeof silentServer>>;
  before(async () => (silent = await silentServer()));
  after(() => silent.close());

  it('every RPC ends at its deadline: 4 DEADLINE_EXCEEDED, the history long poll later', async () => {
    const temporal = new Client({
      connection: gatewayTemporalConnection(silent.address, { callMs: 300, longPollMs: 1200 }),
    });
    const call = await timed(() => temporal.workflowService.describeNamespace({ namespace: 'default' }));
    assert.equal((call.err as { code?: number }).code, 4, String(call.err));
    assert.ok(call.ms >= 250 && call.ms < 1000, `describe ended after ${call.ms} ms`);

    const poll = await timed(() =>
      temporal.workflowService.getWorkflowExecutionHistory({
        namespace: 'default',
        execution: { workflowId: 'w' },
        waitNewEvent: true,
      }),
    );
    assert.equal((poll.err as { code?: number }).code, 4, String(poll.err));
    assert.ok(poll.ms >= 1100 && poll.ms < 2500, `long poll ended after ${poll.ms} ms`);
  });

  it('withinDeadline answers at its own deadline, worded as the SDK deadline was', async () => {
    const temporal = new Client({ connection: gatewayTemporalConnection(silent.address) });
    const { err, ms } = await timed(() =>
      withinDeadline(() => temporal.workflow.getHandle('w-1').describe(), 200),
    );
    assert.ok(ms >= 190 && ms < 800, `answered after ${ms} ms`);
    assert.match(
      temporalError(err, 'read workflow run').message,
      /^failed to read workflow run: Temporal did not answer before the deadline \(4 DEADLINE_EXCEEDED: no answer within 0\.2s\)$/,
    );
  });
});

describe('the gateway on a real Temporal', () => {
  const h = new WorkflowHarness();
  const entered: string[] = [];
  const original = { run: AsyncLocalStorage.prototype.run, enterWith: AsyncLocalStorage.prototype.enterWith };

  before(async () => {
    await h.start();
    // Any AsyncLocalStorage entered from here on, with where it was entered.
    const note = () => entered.push(new Error().stack ?? '');
    AsyncLocalStorage.prototype.run = function (this: AsyncLocalStorage<unknown>, ...args: never[]) {
      note();
      return (original.run as (...a: never[]) => unknown).apply(this, args);
    } as typeof original.run;
    AsyncLocalStorage.prototype.enterWith = function (this: AsyncLocalStorage<unknown>, store: unknown) {
      note();
      original.enterWith.call(this, store);
    };
  });
  after(async () => {
    Object.assign(AsyncLocalStorage.prototype, original);
    await h.stop();
  });

  it('no route that talks to Temporal enters an AsyncLocalStorage, and each answers', async () => {
    const name = 'send-email-received-ein';
    const input = {
      userId: h.caller.userId,
      companyId: h.caller.companyId,
      organizationId: h.caller.organizationId,
      emailAction: 'ein-received',
      recipients: [`als-${randomUUID()}@example.com`],
    };
    // No worker: the run stays pending, so the wait below long-polls for its whole second.
    const started = await h.trigger(name, input);
    assert.equal(started.status, 202, JSON.stringify(started.body));
    const runId = started.body['runId'] as string;
    const waited = await h.request('GET', `/api/workflow/${name}?runId=${runId}&wait=1`);
    assert.equal(waited.status, 200);
    assert.equal(waited.body['status'], 'pending');
    assert.equal((await h.request('GET', `/api/workflow/${name}/runs`)).status, 200);
    const cancelled = await h.request('DELETE', `/api/workflow/${name}?runId=${runId}`);
    assert.equal(cancelled.status, 202, JSON.stringify(cancelled.body));
    const schedule = await h.request('POST', `/api/workflow/${name}/schedules`, {
      cron: '0 9 1 1 *',
      paused: true,
      input,
    });
    assert.equal(schedule.status, 201, JSON.stringify(schedule.body));
    const sendAt = new Date(Date.now() + 3_600_000).toISOString();
    const scheduled = await h.request('POST', '/api/email/send', {
      to: 'later@example.com',
      subject: 'Later',
      template_id: 'custom',
      html_body: '<p>later</p>',
      send_at: sendAt,
    });
    assert.equal(scheduled.body['scheduled'], true, JSON.stringify(scheduled.body));
    const emailId = scheduled.body['email_id'] as string;
    assert.equal((await h.request('DELETE', `/api/email/scheduled/${emailId}`)).status, 200);
    assert.equal((await h.request('GET', '/ready')).status, 200);

    assert.deepEqual(entered, [], 'AsyncLocalStorage entered by the gateway');
  });
});
