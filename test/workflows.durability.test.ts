/**
 * Durability: a worker process killed (SIGKILL) in the worst moment — the
 * provider has accepted the email but Temporal has not yet heard that the
 * step finished — must not lose the run nor send twice. A new worker picks
 * the step up again (after the heartbeat timeout), the retry finds the record
 * by its idempotency key and sends nothing, and the run completes.
 *
 * To make "the worst moment" deterministic, the worker process reaches
 * Temporal through a TCP proxy that this test freezes as soon as the send has
 * begun: the step's completion is then stuck in the proxy when the process dies.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { WorkflowHarness } from './support/workflow-harness.ts';
import { temporalAddress } from './support/env.ts';
import { until } from './support/until.ts';

/** A TCP proxy to Temporal that can stop passing bytes, like a network partition. */
class FreezableProxy {
  private server: Server | undefined;
  private sockets: Socket[] = [];
  frozen = false;
  address = '';

  async start(target: string): Promise<void> {
    const [host, port] = target.split(':') as [string, string];
    this.server = createServer((client) => {
      const upstream = createConnection({ host, port: Number(port) });
      this.sockets.push(client, upstream);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      if (this.frozen) return client.pause();
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.address = `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** From now on nothing the worker says reaches Temporal, and nothing comes back. */
  freeze(): void {
    this.frozen = true;
    for (const s of this.sockets) {
      s.unpipe();
      s.pause();
    }
  }

  /**
   * Closes every connection, as the kernel does when a process dies. (A paused
   * socket would not notice its peer vanish, and Temporal would keep handing
   * tasks to the dead worker's still-open polls.)
   */
  dropAll(): void {
    this.sockets.splice(0).forEach((s) => s.destroy());
  }

  async stop(): Promise<void> {
    this.dropAll();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

const h = new WorkflowHarness();
const proxy = new FreezableProxy();
let child: ChildProcess | undefined;

before(async () => {
  await h.start();
  await proxy.start(temporalAddress());
});
after(async () => {
  child?.kill('SIGKILL');
  await proxy.stop();
  await h.stop();
});

function startWorkerProcess(temporal = proxy.address): ChildProcess {
  return h.spawnWorkerProcess({ TEMPORAL_ADDRESS: temporal });
}

describe('worker killed mid-step', () => {
  it(
    'SIGTERM drains: a send 12 s at the provider finishes, the process exits 0, no step is retried',
    { timeout: 90_000 },
    async () => {
      h.fake.reset();
      const userId = `user-${randomUUID()}`;
      await h.insertUser({ _id: userId, email: `${userId}@example.com`, name: 'Bo' });
      const proc = startWorkerProcess(temporalAddress());
      const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
      // Longer than the SDK's usual 10 s grace, within SHUTDOWN_GRACE_SECONDS (40).
      h.fake.delayMs = 12_000;
      const { body } = await h.trigger('send-welcome-email', { userId });
      const runId = body['runId'] as string;
      await until('the pending email record', () => h.emailTo(`${userId}@example.com`), 60_000);
      proc.kill('SIGTERM');
      assert.equal(await exited, 0);
      // The provider answered before the process left, and Temporal heard the step finish.
      assert.equal(h.fake.accepted.length, 1);

      await h.startWorker();
      const run = await h.waitForStatus('send-welcome-email', runId, 'completed', 30_000);
      assert.equal(run.result?.result['message'], 'welcome email sent');
      assert.equal(h.fake.received.length, 1);
      const { events } = await h.temporal.workflow.getHandle(runId).fetchHistory();
      const attempts = (events ?? [])
        .map((e) => e.activityTaskStartedEventAttributes?.attempt)
        .filter(Boolean);
      assert.deepEqual([...new Set(attempts)], [1], 'no step needed a retry');
      await h.stopWorkers();
      h.fake.reset();
    },
  );

  it(
    'the run completes on a new worker with exactly one email and the user flagged',
    { timeout: 90_000 },
    async () => {
      const userId = `user-${randomUUID()}`;
      await h.insertUser({ _id: userId, email: `${userId}@example.com`, name: 'Ada' });
      const address = `${userId}@example.com`;

      child = startWorkerProcess();
      const exited = new Promise<NodeJS.Signals | null>((resolve) =>
        child!.once('exit', (_code, signal) => resolve(signal)),
      );
      h.fake.delayMs = 1000; // the provider takes a second: the send is observably in flight

      const { body } = await h.trigger('send-welcome-email', { userId });
      const runId = body['runId'] as string;

      // The email core wrote the pending record: the send is under way. Cut the worker off from Temporal.
      await until('the pending email record', () => h.emailTo(address), 60_000);
      proxy.freeze();

      // The provider accepts and the record becomes `sent`, but the completion is stuck in the proxy.
      await h.fake.waitForRequests(1, 10_000);
      await until('the record to be sent', async () => (await h.emailTo(address))?.status === 'sent', 30_000);
      child.kill('SIGKILL');
      assert.equal(await exited, 'SIGKILL');
      proxy.dropAll();

      const meanwhile = await h.status('send-welcome-email', runId);
      assert.equal(meanwhile.body.status, 'running');

      await h.startWorker();
      const run = await h.waitForStatus('send-welcome-email', runId, 'completed', 45_000);
      assert.equal(run.result?.result['message'], 'welcome email sent');

      assert.equal(h.fake.received.length, 1, 'the provider was called once');
      assert.equal(h.fake.accepted.length, 1, 'exactly one email accepted');
      const email = await h.emailTo(address);
      assert.equal(email?.status, 'sent');
      assert.equal(run.result?.result['emailId'], email?.email_id);
      const user = await h.database.db
        .collection<{ _id: string; welcomeEmailSent?: boolean }>('users')
        .findOne({ _id: userId });
      assert.equal(user?.welcomeEmailSent, true);

      // The step really ran twice: once on the killed worker, once (without sending) on the new one.
      const { events } = await h.temporal.workflow.getHandle(runId).fetchHistory();
      const attempts = (events ?? [])
        .map((e) => e.activityTaskStartedEventAttributes?.attempt)
        .filter((a): a is number => typeof a === 'number');
      assert.ok(Math.max(...attempts) >= 2, `expected a retried attempt, saw ${JSON.stringify(attempts)}`);
    },
  );
});
