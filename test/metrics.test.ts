import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../core/config.ts';
import { createLogger } from '../core/logger.ts';
import { createApp } from '../api/app.ts';
import { metricsApp } from '../api/middleware/metrics.ts';
import { Client, Connection } from '@temporalio/client';
import { Scrape } from './support/metrics.ts';
import { invoiceBody } from './support/sample-emails.ts';
import { mongoUri, TEST_SECRET } from './support/env.ts';
import { serve } from './support/serve.ts';
import { WorkflowHarness } from './support/workflow-harness.ts';

/**
 * GET /metrics on a real gateway (real email core, real Temporal, the fake
 * SendGrid): after sends, a failed send, webhook events, a pixel open and
 * workflow triggers, the scrape shows each as a series with the expected
 * count. The registry is per process, so every assertion is on the change
 * between a scrape before and one after.
 */
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
      { event: 'processed', email_id: emailId, timestamp: 1 }, // a type that changes nothing
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

    const now = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}) =>
      now.value(name, labels) - before.value(name, labels);
    assert.equal(delta('mailroom_webhook_events_total', { type: 'delivered', result: 'applied' }), 1);
    assert.equal(delta('mailroom_webhook_events_total', { type: 'delivered', result: 'ignored' }), 1);
    assert.equal(delta('mailroom_webhook_events_total', { type: 'processed', result: 'ignored' }), 1);
    assert.equal(delta('mailroom_webhook_events_total', { type: 'other', result: 'ignored' }), 1);
    assert.equal(delta('mailroom_webhook_events_total'), 4);
    assert.equal(delta('mailroom_opens_recorded_total'), 1);
    assert.equal(delta('mailroom_opens_dropped_total'), 0);
    assert.ok(now.has('mailroom_opens_dropped_total'), 'the dropped counter is exposed at 0');
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
    assert.equal((await h.trigger('send-goodbye-email', { userId: 'u-1' })).status, 404);
    await h.temporal.workflow.getHandle(String(started.body['runId'])).terminate('test cleanup');

    const now = await scrape();
    const delta = (labels: Record<string, string>) =>
      now.value('mailroom_workflow_triggers_total', labels) -
      before.value('mailroom_workflow_triggers_total', labels);
    const welcome = { workflow: 'send-welcome-email' };
    assert.equal(delta({ ...welcome, result: 'started' }), 2);
    assert.equal(delta({ ...welcome, result: 'already_started' }), 1);
    assert.equal(delta({ ...welcome, result: 'invalid' }), 1);
    // An unknown name is no workflow: it shows only in the HTTP metrics, as a 404.
    assert.equal(delta({}), 4);
    const route = { method: 'POST', route: '/api/workflow/:workflowName' };
    assert.equal(
      now.value('mailroom_http_requests_total', { ...route, status: '404' }) -
        before.value('mailroom_http_requests_total', { ...route, status: '404' }),
      1,
    );
  });
});

describe('METRICS_PORT', () => {
  it('moves /metrics off the gateway port to a listener of its own', async () => {
    const config = loadConfig({
      MONGODB_URI: mongoUri(),
      MAILROOM_SECRET: TEST_SECRET,
      AUTH_MODE: 'trusted-headers',
      LOG_LEVEL: 'silent',
      METRICS_PORT: '9464',
    });
    assert.equal(config.metricsPort, 9464);
    const temporal = new Client({ connection: Connection.lazy({ address: '127.0.0.1:1' }) });
    const gateway = await serve(
      createApp({
        config,
        logger: createLogger('test', config),
        db: h.database.db,
        temporal,
        email: h.email,
      }),
    );
    const metrics = await serve(metricsApp());
    try {
      assert.equal((await fetch(`${gateway.url}/metrics`)).status, 404);
      const s = await Scrape.of(`${metrics.url}/metrics`);
      assert.ok(s.has('mailroom_http_requests_total'));
      assert.equal((await fetch(`${metrics.url}/api/email/send`)).status, 404);
    } finally {
      await gateway.close();
      await metrics.close();
    }
  });

  it('must differ from PORT', () => {
    assert.throws(
      () => loadConfig({ MAILROOM_SECRET: TEST_SECRET, PORT: '3000', METRICS_PORT: '3000' }),
      /METRICS_PORT must differ from PORT/,
    );
  });
});
