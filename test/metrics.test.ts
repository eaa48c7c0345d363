import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../core/config.ts';
import { RUN_TS, freePort } from '../infra/processes.ts';
import { startEmailApp } from './support/email-app.ts';
import { Scrape } from './support/metrics.ts';
import { invoiceBody } from './support/sample-emails.ts';
import { TEST_SECRET } from './support/env.ts';
import { WorkflowHarness } from './support/workflow-harness.ts';
import { until } from './support/until.ts';

/**
 * GET /metrics on a real gateway (real email core, real Temporal, the fake
 * SendGrid): after sends, a failed send, webhook events, a pixel open and
 * workflow triggers, the scrape shows each as a series with the expected
 * count. The registry is per process, so every assertion is on the change
 * between a scrape before and one after.
 */
const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const h = new WorkflowHarness();
before(() => h.start({ AUTH_MODE: 'trusted-headers', SENDGRID_WEBHOOK_ALLOW_UNSIGNED: 'true' }));
after(() => h.stop());

const caller = { 'x-company-id': randomUUID(), 'x-organization-id': randomUUID(), 'x-user-id': randomUUID() };
const scrape = () => Scrape.of(`${h.baseUrl}/metrics`);

describe('GET /metrics', () => {
  it('serves the Prometheus text format with the process metrics, unauthenticated', async () => {
    const res = await fetch(`${h.baseUrl}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const s = await scrape();
    for (const name of [
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
    ])
      assert.ok(s.has(name), `${name} is exposed`);
  });

  it('counts sent and failed emails by template and failure kind, and times the provider calls', async () => {
    const before = await scrape();
    const sent = await h.request('POST', '/api/email/send', invoiceBody(), caller);
    assert.equal(sent.status, 200);
    h.fake.plan(400); // SendGrid's final no
    const rejected = await h.request('POST', '/api/email/send', invoiceBody(), caller);
    assert.equal(rejected.status, 500);
    h.fake.plan(503); // worth a retry, but a failed attempt all the same
    const unavailable = await h.request('POST', '/api/email/send', invoiceBody(), caller);
    assert.equal(unavailable.status, 500);
    const invalid = await h.request('POST', '/api/email/send', invoiceBody({ template_id: 'nope' }), caller);
    assert.equal(invalid.status, 400);

    const now = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}) =>
      now.value(name, labels) - before.value(name, labels);
    assert.equal(delta('mailroom_emails_sent_total', { template: 'invoice' }), 1);
    assert.equal(
      delta('mailroom_emails_failed_total', { template: 'invoice', kind: 'provider_rejected' }),
      1,
    );
    assert.equal(delta('mailroom_emails_failed_total', { template: 'invoice', kind: 'transient' }), 1);
    // The invalid send reached no provider and is no failed email (its 400 is in the HTTP metrics).
    assert.equal(delta('mailroom_emails_failed_total'), 2);
    assert.equal(delta('mailroom_emails_sent_total'), 1);
    assert.equal(delta('mailroom_provider_request_duration_seconds_count', { outcome: 'ok' }), 1);
    assert.equal(
      delta('mailroom_provider_request_duration_seconds_count', { outcome: 'provider_rejected' }),
      1,
    );
    assert.equal(delta('mailroom_provider_request_duration_seconds_count', { outcome: 'transient' }), 1);
    const send = { method: 'POST', route: '/api/email/send' };
    assert.equal(delta('mailroom_http_requests_total', { ...send, status: '200' }), 1);
    assert.equal(delta('mailroom_http_requests_total', { ...send, status: '500' }), 2);
    assert.equal(delta('mailroom_http_requests_total', { ...send, status: '400' }), 1);
    assert.equal(delta('mailroom_http_request_duration_seconds_count', send), 4);
    assert.equal(
      delta('mailroom_http_request_duration_seconds_bucket', { ...send, status: '200', le: '+Inf' }),
      1,
    );
  });

  it('labels requests with the route template, never the raw URL', async () => {
    const sent = await h.request('POST', '/api/email/send', invoiceBody(), caller);
    const emailId = String(sent.body['email_id']);
    const before = await scrape();
    assert.equal((await h.request('GET', `/api/email/status/${emailId}?x=1`, undefined, caller)).status, 200);
    assert.equal((await h.request('GET', `/no/such/${randomUUID()}`)).status, 404);
    const now = await scrape();
    const route = (r: string, status: string) =>
      now.value('mailroom_http_requests_total', { method: 'GET', route: r, status }) -
      before.value('mailroom_http_requests_total', { method: 'GET', route: r, status });
    assert.equal(route('/api/email/status/:email_id', '200'), 1);
    assert.equal(route('unmatched', '404'), 1);
    const routes = new Set(
      now.samples.filter((s) => s.name === 'mailroom_http_requests_total').map((s) => s.labels['route']),
    );
    for (const r of routes) assert.doesNotMatch(r ?? '', /[0-9a-f]{8}-|\?/, `route label ${r} is a template`);
    // Scrapes themselves are not counted.
    assert.ok(![...routes].includes('/metrics'));
  });

  it('counts webhook events by type and result, and pixel opens', async () => {
    const sent = await h.request('POST', '/api/email/send', invoiceBody(), caller);
    const emailId = String(sent.body['email_id']);
    const before = await scrape();
    const events = [
      { event: 'delivered', email_id: emailId, timestamp: 1 },
      { event: 'delivered', email_id: randomUUID(), timestamp: 1 }, // no such email
      { event: 'deferred', email_id: emailId, timestamp: 1 }, // a type that changes nothing
      { event: 'made-up', email_id: emailId, timestamp: 1 },
    ];
    assert.equal((await h.request('POST', '/api/email/webhooks/sendgrid', events)).status, 200);
    const record = await h.database.db
      .collection<{ _id: string; view_key: string }>('emails')
      .findOne({ _id: emailId });
    const pixel = await fetch(
      `${h.baseUrl}/api/email/track?view_key=${encodeURIComponent(record!.view_key)}`,
    );
    assert.equal(pixel.status, 200);
    await pixel.arrayBuffer();
    await (await fetch(`${h.baseUrl}/api/email/track?view_key=not-a-key`)).arrayBuffer();
    // The pixel answers at once; its open is written with the next batch.
    await h.email.flushOpens();

    const now = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}) =>
      now.value(name, labels) - before.value(name, labels);
    assert.equal(delta('mailroom_webhook_events_total', { type: 'delivered', result: 'applied' }), 1);
    assert.equal(delta('mailroom_webhook_events_total', { type: 'delivered', result: 'ignored' }), 1);
    assert.equal(delta('mailroom_webhook_events_total', { type: 'deferred', result: 'ignored' }), 1);
    assert.equal(delta('mailroom_webhook_events_total', { type: 'other', result: 'ignored' }), 1);
    assert.equal(delta('mailroom_webhook_events_total'), 4);
    assert.equal(delta('mailroom_opens_recorded_total'), 1);
    assert.equal(delta('mailroom_opens_dropped_total'), 0);
    assert.ok(now.has('mailroom_opens_dropped_total'), 'the dropped counter is exposed at 0');
  });

  it('counts followed click links; their clicks are written with the opens', async () => {
    const sent = await h.request('POST', '/api/email/send', invoiceBody(), caller);
    const html = h.fake.accepted.at(-1)!.body.content.find((c) => c.type === 'text/html')!.value;
    const token = /\/api\/email\/click\/([\w.-]+)/.exec(html)?.[1];
    assert.ok(token, `a tracked link in ${String(sent.body['email_id'])}`);
    const before = await scrape();
    const followed = await fetch(`${h.baseUrl}/api/email/click/${token}`, { redirect: 'manual' });
    assert.equal(followed.status, 302);
    const refused = await fetch(`${h.baseUrl}/api/email/click/${token}x`, { redirect: 'manual' });
    assert.equal(refused.status, 400);
    await h.email.flushOpens();
    const now = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}) =>
      now.value(name, labels) - before.value(name, labels);
    assert.equal(delta('mailroom_clicks_total', { buffered: 'true' }), 1);
    assert.equal(delta('mailroom_clicks_total'), 1, 'the refused token is not a click');
    assert.equal(delta('mailroom_opens_recorded_total'), 1);
  });

  it('counts workflow triggers by workflow name and result', async () => {
    const before = await scrape();
    const started = await h.trigger('send-welcome-email', { userId: 'u-1' });
    assert.equal(started.status, 202);
    const key = { 'Idempotency-Key': randomUUID() };
    const first = await h.trigger('send-welcome-email', { userId: 'u-2' }, key);
    await h.temporal.workflow.getHandle(String(first.body['runId'])).terminate('test cleanup');
    const again = await h.trigger('send-welcome-email', { userId: 'u-2' }, key);
    assert.equal(again.status, 202);
    assert.equal((await h.trigger('send-welcome-email', {})).status, 400);
    const badKey = { 'Idempotency-Key': 'k'.repeat(256) };
    assert.equal((await h.trigger('send-welcome-email', { userId: 'u-3' }, badKey)).status, 400);
    assert.equal((await h.trigger('send-goodbye-email', { userId: 'u-1' })).status, 404);
    await h.temporal.workflow.getHandle(String(started.body['runId'])).terminate('test cleanup');

    const now = await scrape();
    const delta = (labels: Record<string, string>) =>
      now.value('mailroom_workflow_triggers_total', labels) -
      before.value('mailroom_workflow_triggers_total', labels);
    const welcome = { workflow: 'send-welcome-email' };
    assert.equal(delta({ ...welcome, result: 'started' }), 2);
    assert.equal(delta({ ...welcome, result: 'already_started' }), 1);
    assert.equal(delta({ ...welcome, result: 'invalid' }), 2, 'a bad body and a bad Idempotency-Key');
    // An unknown name is no workflow: it shows only in the HTTP metrics, as a 404.
    assert.equal(delta({}), 5);
    const route = { method: 'POST', route: '/api/workflow/:workflowName' };
    assert.equal(
      now.value('mailroom_http_requests_total', { ...route, status: '404' }) -
        before.value('mailroom_http_requests_total', { ...route, status: '404' }),
      1,
    );
  });
});

describe('opens whose write fails', () => {
  it('a pixel open whose write fails is served, kept for a retry, and not yet counted either way', async () => {
    const app = await startEmailApp({ env: { AUTH_MODE: 'trusted-headers' } });
    try {
      const sent = await app.post('/api/email/send', invoiceBody());
      const record = await app.database.db
        .collection<{ _id: string; view_key: string }>('emails')
        .findOne({ _id: String(sent.body['email_id']) });
      const before = await Scrape.of(`${app.url}/metrics`);
      await app.database.client.close(); // the database is gone: the write fails
      const pixel = await fetch(
        `${app.url}/api/email/track?view_key=${encodeURIComponent(record!.view_key)}`,
      );
      assert.equal(pixel.status, 200);
      assert.equal(pixel.headers.get('content-type'), 'image/gif');
      await pixel.arrayBuffer();
      await app.email.flushOpens().catch(() => undefined);
      const now = await Scrape.of(`${app.url}/metrics`);
      assert.equal(
        now.value('mailroom_opens_dropped_total') - before.value('mailroom_opens_dropped_total'),
        0,
        'not dropped: it waits in the buffer for the database',
      );
      assert.deepEqual(
        { pending: app.email.openStats().pending, retried: app.email.openStats().retried },
        { pending: 1, retried: 1 },
      );
      assert.equal(
        now.value('mailroom_opens_recorded_total') - before.value('mailroom_opens_recorded_total'),
        0,
      );
    } finally {
      await app.close().catch(() => undefined);
    }
  });
});

describe('GET /metrics in AUTH_MODE=api-key', () => {
  it('is not served on the gateway port without METRICS_TOKEN or METRICS_PORT: 404 like any unknown path', async () => {
    const app = await startEmailApp({ env: { AUTH_MODE: 'api-key' } });
    try {
      const metrics = await fetch(`${app.url}/metrics`);
      const unknown = await fetch(`${app.url}/no-such-path`);
      assert.equal(metrics.status, 404);
      const body = await metrics.text();
      assert.doesNotMatch(body, /mailroom_|process_cpu/);
      assert.equal(body, await unknown.text());
    } finally {
      await app.close();
    }
  });

  it('with METRICS_TOKEN, serves it on the gateway port to holders of the token only', async () => {
    const token = 'metrics-token-0123456789';
    const app = await startEmailApp({ env: { AUTH_MODE: 'api-key', METRICS_TOKEN: token } });
    try {
      assert.equal((await fetch(`${app.url}/metrics`)).status, 401);
      const scrape = await Scrape.of(`${app.url}/metrics`, { authorization: `Bearer ${token}` });
      assert.ok(scrape.has('process_cpu_user_seconds_total'));
      // The scheme's name is case-insensitive (RFC 9110), as for API keys; the token is not.
      for (const authorization of [`bearer ${token}`, `BEARER  ${token}`])
        assert.equal(
          (await fetch(`${app.url}/metrics`, { headers: { authorization } })).status,
          200,
          authorization,
        );
      for (const authorization of [
        `Bearer ${token.toUpperCase()}`,
        `Bearer ${token} x`,
        `Basic ${token}`,
        token,
      ])
        assert.equal(
          (await fetch(`${app.url}/metrics`, { headers: { authorization } })).status,
          401,
          authorization,
        );
    } finally {
      await app.close();
    }
  });

  it(
    'the gateway process says at start why /metrics is not served, and how to serve it',
    { timeout: 60_000 },
    async () => {
      const port = await freePort();
      const gateway = spawn(process.execPath, [RUN_TS, 'api/server.ts'], {
        cwd: ROOT,
        env: {
          PATH: process.env['PATH'],
          PORT: String(port),
          MONGODB_URI: h.mongoUriForChild(),
          TEMPORAL_ADDRESS: h.config.temporal.address,
          MAILROOM_SECRET: TEST_SECRET,
          AUTH_MODE: 'api-key',
          LOG_LEVEL: 'warn',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      gateway.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      gateway.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      const exited = new Promise<number | null>((resolve) => gateway.once('exit', (code) => resolve(code)));
      try {
        const base = `http://127.0.0.1:${port}`;
        await until('the gateway answers /health', async () => (await fetch(`${base}/health`)).ok, 30_000);
        assert.equal((await fetch(`${base}/metrics`)).status, 404);
        await until('the start-up line is written', async () => output.includes('GET /metrics'), 30_000);
        assert.match(
          output,
          /GET \/metrics is not served \(404\): in AUTH_MODE=api-key set METRICS_TOKEN .* or METRICS_PORT/,
        );
      } finally {
        gateway.kill('SIGTERM');
      }
      assert.equal(await exited, 0);
    },
  );
});

describe('METRICS_PORT', () => {
  it(
    'the gateway process serves /metrics on that port only, to holders of METRICS_TOKEN',
    { timeout: 60_000 },
    async () => {
      const token = 'metrics-token-0123456789';
      const [port, metricsPort] = [await freePort(), await freePort()];
      const gateway = spawn(process.execPath, [RUN_TS, 'api/server.ts'], {
        cwd: ROOT,
        env: {
          PATH: process.env['PATH'],
          PORT: String(port),
          METRICS_PORT: String(metricsPort),
          METRICS_TOKEN: token,
          MONGODB_URI: h.mongoUriForChild(),
          TEMPORAL_ADDRESS: h.config.temporal.address,
          MAILROOM_SECRET: TEST_SECRET,
          AUTH_MODE: 'trusted-headers',
          LOG_LEVEL: 'warn',
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      const exited = new Promise<number | null>((resolve) => gateway.once('exit', (code) => resolve(code)));
      try {
        const base = `http://127.0.0.1:${port}`;
        await until('the gateway answers /health', async () => (await fetch(`${base}/health`)).ok, 30_000);
        assert.equal((await fetch(`${base}/metrics`)).status, 404);
        const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
        for (const authorization of [undefined, 'Bearer wrong-token-0123456789', token]) {
          const res = await fetch(metricsUrl, { headers: authorization ? { authorization } : {} });
          assert.equal(res.status, 401, `authorization ${authorization}`);
          assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="metrics"');
          assert.doesNotMatch(await res.text(), /mailroom_/);
        }
        const scrape = await Scrape.of(metricsUrl, { authorization: `Bearer ${token}` });
        assert.ok(scrape.value('mailroom_http_requests_total', { route: '/health', status: '200' }) >= 1);
        assert.equal((await fetch(`http://127.0.0.1:${metricsPort}/health`)).status, 404);
      } finally {
        gateway.kill('SIGTERM');
      }
      assert.equal(await exited, 0, 'the gateway stops cleanly, its metrics listener included');
    },
  );

  it('must differ from PORT', () => {
    assert.throws(
      () => loadConfig({ MAILROOM_SECRET: TEST_SECRET, PORT: '3000', METRICS_PORT: '3000' }),
      /METRICS_PORT must differ from PORT/,
    );
  });
});
