import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { WorkflowHarness } from '../../../test/support/workflow-harness.ts';
import { startHealthProbe } from '../../../test/support/health-probe.ts';
import { until } from '../../../test/support/until.ts';
import { exposition } from '../../../core/metrics.ts';
import { resetToFirstTask } from '../../../test/support/reset-run.ts';

/**
 * GET /api/workflow/:workflowName?runId=…&wait=<seconds> against the real
 * Temporal server: answered when the run ends, or as it is when the wait is
 * over. No worker runs until the last test starts one, so runs stay pending.
 */
const h = new WorkflowHarness();
// Every one of the 200 concurrent waits below holds a slot (WORKFLOW_WAITS_PER_COMPANY).
before(() => h.start({ WORKFLOW_WAITS_PER_COMPANY: '200' }));
after(() => h.stop());

const WELCOME = 'send-welcome-email';

async function newRun(): Promise<string> {
  const _id = `user-${randomUUID()}`;
  await h.insertUser({ _id, email: `${_id}@example.com`, name: 'Ada' });
  const { status, body } = await h.trigger(WELCOME, { userId: _id });
  assert.equal(status, 202);
  return body['runId'] as string;
}

const waitPath = (runId: string, wait: string) =>
  `/api/workflow/${WELCOME}?runId=${encodeURIComponent(runId)}&wait=${wait}`;

describe('GET /api/workflow/:workflowName?wait=', () => {
  it('answers 400 for a wait that is not a whole number of seconds from 1 to 60', async () => {
    const runId = await newRun();
    for (const wait of ['0', '61', '1.5', 'abc', '', '-1', '0010']) {
      const res = await h.request('GET', waitPath(runId, wait));
      assert.equal(res.status, 400, `wait=${wait}`);
      assert.deepEqual(res.body, {
        success: false,
        error: 'wait must be a whole number of seconds from 1 to 60',
      });
    }
  });

  it('answers a run that is still pending as it is once the wait is over', async () => {
    const runId = await newRun();
    const started = Date.now();
    const res = await h.request('GET', waitPath(runId, '1'));
    assert.equal(res.status, 200);
    assert.equal(res.body['status'], 'pending');
    assert.ok(Date.now() - started >= 900, 'it waited');
  });

  it('200 concurrent waits hold little memory and never stall the gateway', async () => {
    const runId = await newRun();
    globalThis.gc?.();
    const rssBefore = process.memoryUsage().rss;
    // The gateway runs in this process: /health polled from a thread of its own
    // tells how long its event loop kept a request waiting (health-probe.ts).
    const probe = await startHealthProbe(h.baseUrl, process.pid);
    const answers = await Promise.all(
      Array.from({ length: 200 }, () => h.request('GET', waitPath(runId, '3'))),
    );
    // 250 ms: the probe counts this process's CPU, and the 200 clients answered in the
    // same burst run here too; a blocked loop (what this guards) holds it for seconds.
    const health = await probe.stop({ slowerThanMs: 250 });
    const grownMiB = (process.memoryUsage().rss - rssBefore) / 2 ** 20;
    console.log(
      `[wait] 200 concurrent waits: RSS +${grownMiB.toFixed(1)} MiB, /health held at most ${health.worstHeldMs} ms ` +
        `(${health.samples} samples, worst round trip ${health.worstMs} ms)`,
    );
    assert.ok(
      answers.every((a) => a.status === 200 && a.body['status'] === 'pending'),
      'every wait answered',
    );
    // The gateway, the test's 200 clients and Temporal's client share this process.
    assert.ok(grownMiB < 50, `RSS grew ${grownMiB.toFixed(1)} MiB`);
    assert.equal(health.failures, 0);
    assert.equal(health.slow.length, 0, `/health held ${health.worstHeldMs} ms`);
  });

  it('a wait whose client goes away is let go, counted as 499 (client closed request), never as 404', async () => {
    const runId = await newRun();
    const route = 'route="/api/workflow/:workflowName"';
    const count = async (status: number) => {
      const line = (await exposition()).body
        .split('\n')
        .find(
          (l) =>
            l.startsWith('mailroom_http_requests_total{') &&
            l.includes(route) &&
            l.includes(`status="${status}"`),
        );
      return line ? Number(line.split(' ').at(-1)) : 0;
    };
    const [closedBefore, notFoundBefore] = [await count(499), await count(404)];
    const aborted = new AbortController();
    const waiting = fetch(`${h.baseUrl}${waitPath(runId, '30')}`, {
      headers: h.identityHeaders,
      signal: aborted.signal,
    }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 500));
    aborted.abort();
    await waiting;
    await until('the wait is counted', async () => (await count(499)) === closedBefore + 1, 10_000, 100);
    assert.equal(await count(404), notFoundBefore);
  });

  it('answers as soon as the run ends, with its result', async () => {
    const runId = await newRun();
    h.fake.reset();
    h.fake.delayMs = 1_000; // the provider takes a second
    const waiting = h.request('GET', waitPath(runId, '30'));
    await h.startWorker();
    const started = Date.now();
    const res = await waiting;
    assert.equal(res.status, 200);
    assert.equal(res.body['status'], 'completed');
    assert.equal(
      (res.body['result'] as { result: { message: string } }).result.message,
      'welcome email sent',
    );
    assert.ok(Date.now() - started < 20_000, 'answered when the run ended, not when the wait did');
    h.fake.delayMs = 0;
  });

  it('a run reset while the request waits: the wait follows the new run to its end', async () => {
    h.fake.reset();
    h.fake.outage = 503; // the email step retries (1 s, 2 s, …): the run stays running
    const runId = await newRun();
    await until('the first workflow task completed', async () => {
      const history = await h.temporal.workflow.getHandle(runId).fetchHistory();
      return history.events?.some((e) => e.workflowTaskCompletedEventAttributes);
    });
    const started = Date.now();
    const waiting = h.request('GET', waitPath(runId, '30'));
    await new Promise((r) => setTimeout(r, 500)); // the request is waiting on the first run
    // The operator's Reset closes the waited run (terminated) and starts another under the same id.
    const newRunId = await resetToFirstTask(h.temporal, runId);
    await new Promise((r) => setTimeout(r, 1_500));
    h.fake.outage = undefined; // the provider is back: the reset run's next attempt sends
    const res = await waiting;
    assert.equal(res.status, 200);
    assert.equal(res.body['status'], 'completed', JSON.stringify(res.body));
    assert.equal((await h.temporal.workflow.getHandle(runId).describe()).runId, newRunId);
    assert.ok(Date.now() - started < 25_000, 'answered when the reset run ended, not when the wait did');
  });

  it('a run that already ended is answered at once', async () => {
    const runId = await newRun();
    await h.waitForStatus(WELCOME, runId, 'completed');
    const res = await h.request('GET', waitPath(runId, '60'));
    assert.equal(res.status, 200);
    assert.equal(res.body['status'], 'completed');
  });
});
