/**
 * Outbound webhooks end to end on the real servers: endpoints registered
 * through the gateway, events from sends, provider events, opens and runs,
 * signed (verified here with the `standardwebhooks` package, as a receiver
 * would), delivered by Temporal runs on a real worker, retried, replayed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { Webhook } from 'standardwebhooks';
import { invoiceBody } from '../../../test/support/sample-emails.ts';
import { WebhookReceiver } from '../../../test/support/webhook-receiver.ts';
import { WorkflowHarness } from '../../../test/support/workflow-harness.ts';
import { EVENT_TYPES } from '../../../core/webhooks/webhook-events.ts';
import { clickTokens } from '../../../core/email/tracking/click-token.ts';
import { TEST_SECRET } from '../../../test/support/env.ts';

const h = new WorkflowHarness();
const receiver = new WebhookReceiver();

before(async () => {
  await receiver.start();
  await h.start({
    // The receiver runs on 127.0.0.1; production refuses private addresses (last describe).
    WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.1',
    WEBHOOK_RETRY_INITIAL_SECONDS: '1',
    WEBHOOK_RETRY_MAX_SECONDS: '1',
    WEBHOOK_DISABLE_AFTER_FAILED_ATTEMPTS: '5',
    SENDGRID_WEBHOOK_ALLOW_UNSIGNED: 'true',
  });
  await h.startWorker();
});
after(async () => {
  await h.stop();
  await receiver.stop();
});

/** Registers an endpoint on the receiver, at a path of its own (`received` filters by it). */
async function register(events: string[], headers: Record<string, string> = {}) {
  const url = `${receiver.url}/${randomUUID()}`;
  const res = await h.request('POST', '/api/webhooks', { url, events, description: 'test' }, headers);
  assert.equal(res.status, 201, JSON.stringify(res.body));
  const endpoint = res.body['webhook'] as { id: string; secret: string; url: string };
  return { ...endpoint, received: () => receiver.received.filter((r) => url.endsWith(r.url)) };
}

const verify = (secret: string, r: { body: string; headers: Record<string, unknown> }) =>
  new Webhook(secret).verify(r.body, r.headers as Record<string, string>);

/** Sends carry an organization too (the send interface requires it). */
const ORGANIZATION = { 'x-organization-id': randomUUID() };

async function send(to: string) {
  const res = await h.request('POST', '/api/email/send', invoiceBody({ to }), ORGANIZATION);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body['email_id'] as string;
}

describe('endpoints', () => {
  it('are registered with a secret shown once, listed without it, and another company sees none', async () => {
    const endpoint = await register(['email.sent']);
    assert.match(endpoint.secret, /^whsec_/);
    const list = await h.request('GET', '/api/webhooks');
    const mine = (list.body['data'] as Array<Record<string, unknown>>).find((e) => e['id'] === endpoint.id);
    assert.ok(mine);
    assert.equal(mine['secret'], undefined);
    assert.deepEqual(mine['events'], ['email.sent']);

    const other = { 'x-company-id': randomUUID(), 'x-user-id': randomUUID() };
    assert.deepEqual((await h.request('GET', '/api/webhooks', undefined, other)).body['data'], []);
    for (const [method, path, body] of [
      ['GET', `/api/webhooks/${endpoint.id}`, undefined],
      ['PATCH', `/api/webhooks/${endpoint.id}`, { enabled: false }],
      ['DELETE', `/api/webhooks/${endpoint.id}`, undefined],
      ['POST', `/api/webhooks/${endpoint.id}/rotate-secret`, undefined],
      ['GET', `/api/webhooks/${endpoint.id}/deliveries`, undefined],
    ] as const) {
      const res = await h.request(method, path, body, other);
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.deepEqual(res.body, { success: false, error: 'webhook endpoint not found' });
    }
    const del = await h.request('DELETE', `/api/webhooks/${endpoint.id}`);
    assert.equal(del.status, 200);
    assert.equal((await h.request('GET', `/api/webhooks/${endpoint.id}`)).status, 404);
  });

  it('refuse bad bodies with 400 in the error shape', async () => {
    for (const body of [
      { url: receiver.url, events: [] },
      { url: receiver.url, events: ['email.nope'] },
      { url: 'ftp://example.com/x', events: ['email.sent'] },
      { url: 'http://user:pw@example.com/x', events: ['email.sent'] },
      { events: ['email.sent'] },
    ]) {
      const res = await h.request('POST', '/api/webhooks', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body['success'], false);
      assert.equal(typeof res.body['error'], 'string');
    }
    const unknownEvent = await h.request('POST', '/api/webhooks', {
      url: receiver.url,
      events: ['email.nope'],
    });
    assert.equal(
      unknownEvent.body['error'],
      `invalid field events[0]: must be one of: ${EVENT_TYPES.join(', ')}.`,
    );
    const endpoint = await register(['email.sent']);
    const empty = await h.request('PATCH', `/api/webhooks/${endpoint.id}`, {});
    assert.equal(empty.status, 400);
    assert.deepEqual(empty.body, {
      success: false,
      error: 'nothing to change: give at least one of url, events, description, enabled',
    });
    // The receiver is shared: an endpoint left behind would take other cases' events.
    await h.request('DELETE', `/api/webhooks/${endpoint.id}`);
  });
});

describe('deliveries', () => {
  it('a send produces email.sent, signed per Standard Webhooks, with the record in data', async () => {
    const endpoint = await register(['email.sent', 'email.delivered']);
    const to = `wh-${randomUUID()}@example.com`;
    const emailId = await send(to);
    await receiver.waitFor(() => endpoint.received().some((x) => x.json.data['email_id'] === emailId));
    const got = endpoint.received().filter((x) => x.json.data['email_id'] === emailId);
    assert.equal(got.length, 1);
    const [event] = got;
    assert.equal(event!.json.type, 'email.sent');
    assert.equal(event!.json.data['recipient_email'], to);
    assert.equal(event!.json.data['status'], 'sent');
    assert.equal(event!.json.data['company_id'], h.caller.companyId);
    assert.match(String(event!.headers['webhook-id']), /^msg_/);
    assert.ok(verify(endpoint.secret, event!), 'verifies with the endpoint secret');
    assert.throws(() => verify(`whsec_${Buffer.alloc(24, 1).toString('base64')}`, event!));
    // Announced while the provider was called, it says when the record became sent.
    const record = await h.database.db
      .collection<{ _id: string; sent_at?: Date; provider_id?: string; provider?: string }>('emails')
      .findOne({ _id: emailId });
    assert.equal(event!.json.timestamp, record?.sent_at?.toISOString());
    // The data is the record as the send left it, the provider's id included.
    assert.ok(record?.provider_id, 'the record has its provider id');
    assert.equal(event!.json.data['provider_id'], record.provider_id);
    assert.equal(event!.json.data['provider'], record.provider);
    assert.equal(event!.json.data['error'], null);

    // A provider event for it: email.delivered, another id.
    const hook = await h.request('POST', '/api/email/webhooks/sendgrid', [
      {
        event: 'delivered',
        email_id: emailId,
        timestamp: Math.floor(Date.now() / 1000),
        sg_event_id: randomUUID(),
      },
    ]);
    assert.ok(hook.status < 300, JSON.stringify(hook.body));
    await receiver.waitFor(() =>
      endpoint
        .received()
        .some((x) => x.json.type === 'email.delivered' && x.json.data['email_id'] === emailId),
    );
    await h.request('DELETE', `/api/webhooks/${endpoint.id}`);
  });

  it('a send the provider refuses tells email.failed, never email.sent, and leaves no outbox entry', async () => {
    const endpoint = await register(['email.sent', 'email.failed']);
    try {
      h.fake.plan(400);
      const res = await h.request(
        'POST',
        '/api/email/send',
        invoiceBody({ to: 'refused@example.com' }),
        ORGANIZATION,
      );
      assert.equal(res.status, 500, JSON.stringify(res.body));
      assert.match(String(res.body['error']), /^email provider rejected the message/);
      await receiver.waitFor(() => endpoint.received().some((x) => x.json.type === 'email.failed'));
      const outbox = h.database.db.collection('webhook_outbox');
      const failed = endpoint.received().find((x) => x.json.type === 'email.failed')!;
      const failedId = String(failed.json.data['email_id']);
      assert.equal(failed.json.data['recipient_email'], 'refused@example.com');
      const deadline = Date.now() + 5_000;
      while ((await outbox.countDocuments({ email_id: failedId })) > 0 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      assert.equal(
        await outbox.countDocuments({ email_id: failedId }),
        0,
        'the sent announcement was taken back',
      );
      assert.ok(!endpoint.received().some((x) => x.json.type === 'email.sent'));
    } finally {
      await h.request('DELETE', `/api/webhooks/${endpoint.id}`);
    }
  });

  it('a receiver failing twice gets the same event id three times; the delivery ends delivered', async () => {
    const endpoint = await register(['email.sent']);
    receiver.failNext = 2;
    const emailId = await send(`retry-${randomUUID()}@example.com`);
    await receiver.waitFor(
      () => endpoint.received().filter((x) => x.json.data['email_id'] === emailId).length >= 3,
    );
    const got = endpoint.received().filter((x) => x.json.data['email_id'] === emailId);
    assert.equal(new Set(got.map((x) => x.headers['webhook-id'])).size, 1, 'one event id');
    let delivery: Record<string, unknown> | undefined;
    for (let i = 0; i < 50; i++) {
      const list = await h.request('GET', `/api/webhooks/${endpoint.id}/deliveries`);
      delivery = (list.body['data'] as Array<Record<string, unknown>>)[0];
      if (delivery?.['status'] === 'delivered') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(delivery?.['status'], 'delivered');
    assert.equal(delivery?.['attempts'], 3);
    assert.equal(delivery?.['last_response_code'], 200);
    assert.equal(delivery?.['delivery_id'], got[0]!.headers['webhook-id']);

    // Replayed on request: the same id and body once more.
    const replay = await h.request(
      'POST',
      `/api/webhooks/${endpoint.id}/deliveries/${String(delivery?.['delivery_id'])}/retry`,
    );
    assert.equal(replay.status, 202, JSON.stringify(replay.body));
    await receiver.waitFor(
      () => endpoint.received().filter((x) => x.json.data['email_id'] === emailId).length >= 4,
    );
    const last = endpoint
      .received()
      .filter((x) => x.json.data['email_id'] === emailId)
      .at(-1)!;
    assert.equal(last.headers['webhook-id'], got[0]!.headers['webhook-id']);
    assert.equal(last.body, got[0]!.body);

    // Ten replays asked for at once: one is started (202), the others find it pending (409).
    const retryPath = `/api/webhooks/${endpoint.id}/deliveries/${String(delivery?.['delivery_id'])}/retry`;
    for (let i = 0; i < 50; i++) {
      const list = await h.request('GET', `/api/webhooks/${endpoint.id}/deliveries`);
      if ((list.body['data'] as Array<Record<string, unknown>>)[0]?.['status'] === 'delivered') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const replays = await Promise.all(Array.from({ length: 10 }, () => h.request('POST', retryPath)));
    const statuses = replays.map((r) => r.status).sort();
    assert.deepEqual(statuses, [202, ...Array<number>(9).fill(409)], statuses.join(' '));
    await receiver.waitFor(
      () => endpoint.received().filter((x) => x.json.data['email_id'] === emailId).length >= 5,
    );
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(endpoint.received().filter((x) => x.json.data['email_id'] === emailId).length, 5);
    await h.request('DELETE', `/api/webhooks/${endpoint.id}`);
  });

  it('deliveries are listed newest first, a page at a time, by cursor', async () => {
    const endpoint = await register(['email.sent']);
    try {
      const sent = [];
      for (let i = 0; i < 3; i++) sent.push(await send(`page-${i}-${randomUUID()}@example.com`));
      await receiver.waitFor(() => endpoint.received().length >= 3);
      const seen: string[] = [];
      let cursor: string | null = null;
      for (let page = 0; page < 5; page++) {
        const query: string = cursor ? `?limit=1&cursor=${encodeURIComponent(cursor)}` : '?limit=1';
        const res = await h.request('GET', `/api/webhooks/${endpoint.id}/deliveries${query}`);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        const data = res.body['data'] as Array<Record<string, unknown>>;
        assert.ok(data.length <= 1);
        seen.push(...data.map((d) => String(d['delivery_id'])));
        cursor = res.body['nextCursor'] as string | null;
        if (!cursor) break;
      }
      assert.equal(seen.length, 3, 'every delivery once across the pages');
      assert.equal(new Set(seen).size, 3);
      const all = await h.request('GET', `/api/webhooks/${endpoint.id}/deliveries`);
      assert.deepEqual(
        (all.body['data'] as Array<Record<string, unknown>>).map((d) => d['delivery_id']),
        seen,
        'pages follow the newest-first order',
      );
      const bad = await h.request('GET', `/api/webhooks/${endpoint.id}/deliveries?cursor=forged.cursor`);
      assert.equal(bad.status, 400);
    } finally {
      await h.request('DELETE', `/api/webhooks/${endpoint.id}`);
    }
  });

  it('after a rotation, deliveries verify with the new secret and with the old one', async () => {
    const endpoint = await register(['email.sent']);
    const rotated = await h.request('POST', `/api/webhooks/${endpoint.id}/rotate-secret`);
    assert.equal(rotated.status, 200);
    const secret = rotated.body['secret'] as string;
    assert.notEqual(secret, endpoint.secret);
    const emailId = await send(`rot-${randomUUID()}@example.com`);
    await receiver.waitFor(() => endpoint.received().some((x) => x.json.data['email_id'] === emailId));
    const event = endpoint.received().find((x) => x.json.data['email_id'] === emailId)!;
    assert.ok(verify(secret, event));
    assert.ok(verify(endpoint.secret, event));
    await h.request('DELETE', `/api/webhooks/${endpoint.id}`);
  });

  it('five rotations at once all land: each secret they answered signs the next delivery', async () => {
    const endpoint = await register(['email.sent']);
    const rotations = await Promise.all(
      Array.from({ length: 5 }, () => h.request('POST', `/api/webhooks/${endpoint.id}/rotate-secret`)),
    );
    assert.deepEqual(
      rotations.map((r) => r.status),
      [200, 200, 200, 200, 200],
    );
    const secrets = rotations.map((r) => r.body['secret'] as string);
    assert.equal(new Set(secrets).size, 5);
    const emailId = await send(`rot2-${randomUUID()}@example.com`);
    await receiver.waitFor(() => endpoint.received().some((x) => x.json.data['email_id'] === emailId));
    const event = endpoint.received().find((x) => x.json.data['email_id'] === emailId)!;
    for (const secret of [...secrets, endpoint.secret]) assert.ok(verify(secret, event));
    await h.request('DELETE', `/api/webhooks/${endpoint.id}`);
  });

  it('at most 10 secrets sign at once: 15 rotations at once → 9 × 200 and 6 × 429 until the oldest expires, never a 500', async () => {
    const endpoint = await register(['email.sent']);
    const rotations = await Promise.all(
      Array.from({ length: 15 }, () => h.request('POST', `/api/webhooks/${endpoint.id}/rotate-secret`)),
    );
    const statuses = rotations.map((r) => r.status).sort();
    assert.deepEqual(statuses, [...Array(9).fill(200), ...Array(6).fill(429)], statuses.join(' '));
    const refused = rotations.find((r) => r.status === 429)!;
    assert.deepEqual(refused.body, {
      success: false,
      error:
        'too many secret rotations: 10 secrets sign already. try again when the oldest rotated-out one expires.',
    });
    // The original secret, rotated out first, stops signing 24 h after that rotation.
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(retryAfter > 24 * 3600 - 120 && retryAfter <= 24 * 3600, `Retry-After: ${retryAfter}`);
    const emailId = await send(`rot3-${randomUUID()}@example.com`);
    await receiver.waitFor(() => endpoint.received().some((x) => x.json.data['email_id'] === emailId));
    const event = endpoint.received().find((x) => x.json.data['email_id'] === emailId)!;
    assert.equal(String(event.headers['webhook-signature']).split(' ').length, 10);
    for (const r of rotations.filter((r) => r.status === 200))
      assert.ok(verify(r.body['secret'] as string, event));
    assert.ok(verify(endpoint.secret, event));
    await h.request('DELETE', `/api/webhooks/${endpoint.id}`);
  });

  it('30 registrations at once never pass the cap of 20 endpoints per company', async () => {
    const company = { 'x-company-id': randomUUID(), 'x-user-id': randomUUID() };
    const answers = await Promise.all(
      Array.from({ length: 30 }, () =>
        h.request(
          'POST',
          '/api/webhooks',
          { url: `${receiver.url}/${randomUUID()}`, events: ['email.sent'] },
          company,
        ),
      ),
    );
    const statuses = answers.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 201).length, 20, statuses.join(' '));
    assert.equal(statuses.filter((s) => s === 409).length, 10, statuses.join(' '));
    const list = await h.request('GET', '/api/webhooks', undefined, company);
    assert.equal((list.body['data'] as unknown[]).length, 20);
  });

  it('a run the company triggered ends with workflow.completed', async () => {
    const endpoint = await register(['workflow.completed', 'workflow.failed']);
    const userId = randomUUID();
    await h.insertUser({ _id: userId, email: `user-${userId}@example.com`, name: 'Ada' });
    const res = await h.trigger('send-welcome-email', { userId });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const runId = res.body['runId'] as string;
    await receiver.waitFor(() =>
      endpoint
        .received()
        .some(
          (x) =>
            x.json.data['run_id'] !== undefined &&
            x.json.type === 'workflow.completed' &&
            x.json.data['workflow_id'] === runId,
        ),
    );
    const event = endpoint
      .received()
      .find((x) => x.json.type === 'workflow.completed' && x.json.data['workflow_id'] === runId)!;
    assert.equal(event.json.data['workflow_name'], 'send-welcome-email');
    // One id per run's end, derived from the run: a retried emit cannot make a second event.
    assert.equal(
      event.headers['webhook-id'],
      `msg_${String(event.json.data['run_id']).replace(/-/g, '')}_completed`,
    );
    assert.equal(event.json.data['company_id'], h.caller.companyId);
    assert.ok(verify(endpoint.secret, event));
    await h.request('DELETE', `/api/webhooks/${endpoint.id}`);
  });

  it('a send made while Temporal is unreachable is delivered once Temporal is back', async () => {
    const endpoint = await register(['email.sent']);
    const dead = new Client({ connection: Connection.lazy({ address: '127.0.0.1:1', interceptors: [] }) });
    h.relayTo(dead);
    const emailId = await send(`down-${randomUUID()}@example.com`);
    const status = await h.request('GET', `/api/email/status/${emailId}`, undefined, ORGANIZATION);
    assert.equal(
      status.body['data'] && (status.body['data'] as Record<string, unknown>)['status'],
      'sent',
      'the send answered',
    );
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(endpoint.received().filter((x) => x.json.data['email_id'] === emailId).length, 0);
    const waiting = await h.database.db.collection('webhook_outbox').countDocuments({ email_id: emailId });
    assert.equal(waiting, 1, 'the event waits in the outbox');
    h.relayTo(h.temporal);
    await receiver.waitFor(
      () => endpoint.received().some((x) => x.json.data['email_id'] === emailId),
      30_000,
    );
    assert.equal(endpoint.received().filter((x) => x.json.data['email_id'] === emailId).length, 1);
    await h.request('DELETE', `/api/webhooks/${endpoint.id}`);
  });
});

describe('opens and failing endpoints', () => {
  it('a pixel open produces email.opened (buffered opens included)', async () => {
    const endpoint = await register(['email.opened']);
    try {
      const emailId = await send(`open-${randomUUID()}@example.com`);
      const record = await h.database.db
        .collection<{ _id: string; view_key: string }>('emails')
        .findOne({ _id: emailId });
      const pixel = await fetch(`${h.baseUrl}/api/email/track?view_key=${record!.view_key}`);
      assert.equal(pixel.status, 200);
      await receiver.waitFor(() => endpoint.received().some((x) => x.json.data['email_id'] === emailId));
      const event = endpoint.received().find((x) => x.json.data['email_id'] === emailId)!;
      assert.equal(event.json.type, 'email.opened');
      assert.equal(event.json.data['status'], 'opened');
      // A wrong key records no open and tells nothing.
      await fetch(`${h.baseUrl}/api/email/track?view_key=${record!.view_key.slice(0, -2)}AA`);
      // (The one open may arrive twice under its one id: at least once, docs/webhooks.md.)
      await new Promise((r) => setTimeout(r, 1500));
      const ids = endpoint
        .received()
        .filter((x) => x.json.data['email_id'] === emailId)
        .map((x) => x.headers['webhook-id']);
      assert.deepEqual([...new Set(ids)], [event.headers['webhook-id']]);
    } finally {
      await h.request('DELETE', `/api/webhooks/${endpoint.id}`);
    }
  });

  it('a pixel loaded again and again, and a link followed again and again, announce one event a minute each', async () => {
    const endpoint = await register(['email.opened', 'email.clicked']);
    try {
      const emailId = await send(`repeat-${randomUUID()}@example.com`);
      const record = await h.database.db
        .collection<{ _id: string; view_key: string }>('emails')
        .findOne({ _id: emailId });
      const token = clickTokens(TEST_SECRET).sign(emailId, 'https://acme.example/invoice')!;
      // Six rounds a flush apart (500 ms): each one a write of its own.
      for (let round = 0; round < 6; round++) {
        assert.equal((await fetch(`${h.baseUrl}/api/email/track?view_key=${record!.view_key}`)).status, 200);
        const click = await fetch(`${h.baseUrl}/api/email/click/${token}`, { redirect: 'manual' });
        assert.equal(click.status, 302);
        await new Promise((r) => setTimeout(r, 700));
      }
      const types = () =>
        endpoint
          .received()
          .filter((x) => x.json.data['email_id'] === emailId)
          .map((x) => x.json.type);
      await receiver.waitFor(() => types().includes('email.opened') && types().includes('email.clicked'));
      await new Promise((r) => setTimeout(r, 1500));
      // At least once: a retry may repeat a delivery, never add another event id.
      const ids = (type: string) =>
        new Set(
          endpoint
            .received()
            .filter((x) => x.json.data['email_id'] === emailId && x.json.type === type)
            .map((x) => x.headers['webhook-id']),
        );
      assert.equal(ids('email.opened').size, 1, 'one email.opened');
      assert.equal(ids('email.clicked').size, 1, 'one email.clicked');
    } finally {
      await h.request('DELETE', `/api/webhooks/${endpoint.id}`);
    }
  });

  it('an endpoint failing every attempt is disabled after the threshold, saying why; its delivery ends failed', async () => {
    const endpoint = await register(['email.sent']);
    receiver.failNext = 1000;
    try {
      await send(`down-${randomUUID()}@example.com`);
      let view: Record<string, unknown> = {};
      for (let i = 0; i < 100 && view['enabled'] !== false; i++) {
        await new Promise((r) => setTimeout(r, 200));
        view = (await h.request('GET', `/api/webhooks/${endpoint.id}`)).body['webhook'] as Record<
          string,
          unknown
        >;
      }
      assert.equal(view['enabled'], false);
      assert.match(
        String(view['disabled_reason']),
        /^disabled after 5 failed attempts in a row \(last: HTTP 503/,
      );
      let delivery: Record<string, unknown> | undefined;
      for (let i = 0; i < 50 && delivery?.['status'] !== 'failed'; i++) {
        await new Promise((r) => setTimeout(r, 200));
        const list = await h.request('GET', `/api/webhooks/${endpoint.id}/deliveries`);
        delivery = (list.body['data'] as Array<Record<string, unknown>>)[0];
      }
      assert.equal(delivery?.['status'], 'failed');
      assert.equal(delivery?.['attempts'], 5);
      assert.equal(delivery?.['next_attempt_at'], null);
      const retry = await h.request(
        'POST',
        `/api/webhooks/${endpoint.id}/deliveries/${String(delivery?.['delivery_id'])}/retry`,
      );
      assert.equal(retry.status, 409);
      assert.deepEqual(retry.body, { success: false, error: 'webhook endpoint is disabled' });
    } finally {
      receiver.failNext = 0;
      await h.request('DELETE', `/api/webhooks/${endpoint.id}`);
    }
  });
});

describe('private addresses', () => {
  it('are refused at registration', async () => {
    for (const url of [
      'http://10.1.2.3/hook',
      'http://169.254.169.254/latest',
      'http://[::1]:8080/x',
      'http://127.0.0.2:9/x',
    ]) {
      const res = await h.request('POST', '/api/webhooks', { url, events: ['email.sent'] });
      assert.equal(res.status, 400, url);
      assert.deepEqual(res.body, {
        success: false,
        error: 'url must not point to a private or reserved address',
      });
    }
  });
});
