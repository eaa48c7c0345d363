import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { statusOf, type EmailRecord } from '../../../core/email/records/record.ts';
import { invoiceBody, useEmailApp } from '../../../test/support/email-app.ts';
import { bytesOf } from '../../middleware/json-body.ts';
import { WEBHOOK_BODY_LIMIT } from './webhook.ts';

const SIGNATURE = 'x-twilio-email-event-webhook-signature';
const TIMESTAMP = 'x-twilio-email-event-webhook-timestamp';

/** What SendGrid does: ECDSA P-256 / SHA-256 over `timestamp + body`, DER, base64. */
function signPayload(privateKey: KeyObject, timestamp: string, body: string): string {
  return sign('sha256', Buffer.from(timestamp + body), privateKey).toString('base64');
}

describe('POST /api/email/webhooks/sendgrid', () => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  // SendGrid shows the verification key as base64 DER (SPKI), no PEM armour.
  const publicKeyBase64 = publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
  const app = useEmailApp({ env: { SENDGRID_WEBHOOK_PUBLIC_KEY: publicKeyBase64 } });

  /** Each email's `to` address, which its events name as SendGrid's do. */
  const recipientOf = new Map<string, string>();
  /** To an address of its own: a bounce event suppresses its recipient for the company. */
  async function sendOne(extra: Record<string, unknown> = {}): Promise<string> {
    const to = `customer.${randomUUID()}@example.com`;
    const res = await app.post('/api/email/send', { ...invoiceBody({ to }), ...extra });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const id = String(res.body['email_id']);
    recipientOf.set(id, to);
    return id;
  }
  /** The stored record, its status spelled out (the database holds only the rank). */
  const record = async (emailId: string) => {
    const doc = await app.database.db.collection<EmailRecord>('emails').findOne({ _id: emailId });
    return doc && { ...doc, status: statusOf(doc) };
  };

  async function deliverEvents(
    events: unknown[],
    opts: { key?: KeyObject; tamper?: boolean; omit?: boolean; ageSeconds?: number } = {},
  ) {
    const body = JSON.stringify(events);
    const timestamp = String(Math.floor(Date.now() / 1000) - (opts.ageSeconds ?? 0));
    const signature = signPayload(opts.key ?? privateKey, timestamp, body);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (!opts.omit) {
      headers[SIGNATURE] = signature;
      headers[TIMESTAMP] = timestamp;
    }
    return app.post(
      '/api/email/webhooks/sendgrid',
      opts.tamper ? body.replace('delivered', 'bounce') : body,
      headers,
    );
  }

  const event = (
    email_id: string,
    name: string,
    email = recipientOf.get(email_id) ?? 'customer@example.com',
  ) => ({
    email,
    timestamp: Math.floor(Date.now() / 1000),
    event: name,
    sg_event_id: randomUUID(),
    sg_message_id: 'abc.filter0001',
    email_id,
  });

  it('refuses a correctly signed request whose timestamp is outside ±10 minutes (replay)', async () => {
    const id = await sendOne();
    for (const ageSeconds of [11 * 60, -11 * 60, Math.floor(Date.now() / 1000) - 978_307_200]) {
      const res = await deliverEvents([event(id, 'bounce')], { ageSeconds });
      assert.equal(res.status, 401, String(ageSeconds));
      assert.deepEqual(res.body, { success: false, error: 'webhook timestamp outside the allowed window.' });
    }
    assert.equal((await record(id))?.status, 'sent');
    const fresh = await deliverEvents([event(id, 'delivered')], { ageSeconds: 5 * 60 });
    assert.equal(fresh.status, 200);
  });

  it('accepts a correctly signed batch and applies delivered', async () => {
    const id = await sendOne();
    const res = await deliverEvents([event(id, 'delivered')]);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { success: true });
    const stored = await record(id);
    assert.equal(stored?.['status'], 'delivered');
    assert.equal(stored?.['delivered'], true);
  });

  it('rejects a missing, wrong-key or tampered signature with 401 and changes nothing', async () => {
    const id = await sendOne();
    const otherKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    for (const opts of [{ omit: true }, { key: otherKey }, { tamper: true }]) {
      const res = await deliverEvents([event(id, 'delivered')], opts);
      assert.equal(res.status, 401, JSON.stringify(opts));
      assert.deepEqual(res.body, { success: false, error: 'invalid webhook signature.' });
    }
    const res = await app.post('/api/email/webhooks/sendgrid', JSON.stringify([event(id, 'delivered')]), {
      'content-type': 'application/json',
      [SIGNATURE]: 'not-base64-der',
      [TIMESTAMP]: '1',
    });
    assert.equal(res.status, 401);
    const stored = await record(id);
    assert.equal(stored?.['status'], 'sent');
    assert.equal(stored?.['delivered'], false);
  });

  it('maps open → opened, click → clicked + opened', async () => {
    const opened = await sendOne();
    const clicked = await sendOne();
    const res = await deliverEvents([event(opened, 'open'), event(clicked, 'click')]);
    assert.equal(res.status, 200);
    const o = await record(opened);
    assert.equal(o?.['status'], 'opened');
    assert.equal(o?.['opened'], true);
    assert.ok(o?.['time'] instanceof Date);
    const c = await record(clicked);
    assert.equal(c?.['status'], 'opened');
    assert.equal(c?.['clicked'], true);
    assert.equal(c?.['opened'], true);
  });

  it('bounce and dropped → bounced; an open afterwards sets the flag but not the status', async () => {
    const bounced = await sendOne();
    const dropped = await sendOne();
    assert.equal((await deliverEvents([event(bounced, 'bounce'), event(dropped, 'dropped')])).status, 200);
    assert.equal((await record(bounced))?.['status'], 'bounced');
    assert.equal((await record(dropped))?.['status'], 'bounced');
    assert.equal((await deliverEvents([event(bounced, 'open'), event(bounced, 'delivered')])).status, 200);
    const after = await record(bounced);
    assert.equal(after?.['status'], 'bounced');
    assert.equal(after?.['opened'], true);
  });

  it("moves the status only for the email's to recipients; a cc's bounce suppresses the cc alone", async () => {
    const cc = `copied.${randomUUID()}@example.com`;
    const id = await sendOne({ cc: [{ email: cc }] });
    const stranger = `stranger.${randomUUID()}@example.com`;
    const res = await deliverEvents([event(id, 'bounce', cc), event(id, 'delivered', stranger)]);
    assert.equal(res.status, 200);
    const untouched = await record(id);
    assert.deepEqual([untouched?.status, untouched?.delivered], ['sent', false]);
    const listed = await app.get(`/api/email/suppressions/${encodeURIComponent(cc)}`);
    assert.equal((listed.body['data'] as Record<string, unknown> | undefined)?.['reason'], 'bounce');

    // The to recipient's events move it; an event naming nobody (no `email`) still does.
    assert.equal((await deliverEvents([event(id, 'delivered')])).status, 200);
    assert.equal((await record(id))?.status, 'delivered');
    const { email: _named, ...anonymous } = event(id, 'open');
    assert.equal((await deliverEvents([anonymous])).status, 200);
    assert.equal((await record(id))?.status, 'opened');
  });

  it('out of order and duplicated events end in the same state', async () => {
    const id = await sendOne();
    const batch = [
      event(id, 'open'),
      event(id, 'delivered'),
      event(id, 'open'),
      event(id, 'delivered'),
      event(id, 'processed'),
    ];
    assert.equal((await deliverEvents(batch)).status, 200);
    assert.equal((await deliverEvents(batch)).status, 200);
    const stored = await record(id);
    assert.equal(stored?.['status'], 'opened');
    assert.equal(stored?.['delivered'], true);
    assert.equal(stored?.['opened'], true);
  });

  it("opens arriving out of order leave `time` at the latest open's", async () => {
    const id = await sendOne();
    const now = Math.floor(Date.now() / 1000);
    const openAt = (timestamp: number) => ({ ...event(id, 'open'), timestamp });
    // The later open first (its own request), then an older one, then one older still in a batch.
    assert.equal((await deliverEvents([openAt(now - 60)])).status, 200);
    assert.equal((await deliverEvents([openAt(now - 600)])).status, 200);
    assert.equal((await deliverEvents([openAt(now - 300), event(id, 'delivered')])).status, 200);
    const stored = await record(id);
    assert.equal((stored?.['time'] as Date).getTime(), (now - 60) * 1000);
    assert.equal((stored?.['opened_at'] as Date).getTime(), (now - 600) * 1000, 'the first open');
    assert.equal(stored?.['status'], 'opened');
  });

  it('applies a large batch (written in bulk) to every record it names, unknown ids among them', async () => {
    const ids = await Promise.all(Array.from({ length: 30 }, () => sendOne()));
    const batch = ids.flatMap((id, i) => [
      event(id, 'delivered'),
      event(i % 3 === 0 ? randomUUID() : id, 'open'), // every third open names no record
      ...(i % 5 === 0 ? [event(id, 'bounce')] : []),
    ]);
    assert.equal((await deliverEvents(batch)).status, 200);
    for (const [i, id] of ids.entries()) {
      const stored = await record(id);
      const expected = i % 5 === 0 ? 'bounced' : i % 3 === 0 ? 'delivered' : 'opened';
      assert.equal(stored?.['status'], expected, `email ${i}`);
      assert.equal(stored?.['delivered'], true);
      assert.equal(stored?.['opened'], i % 3 !== 0, `email ${i} opened`);
    }
  });

  it('unknown email ids and events without one are ignored with 200', async () => {
    const res = await deliverEvents([
      event(randomUUID(), 'delivered'),
      { event: 'delivered' },
      event('not-a-uuid', 'open'),
    ]);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { success: true });
  });

  it('a signed body that is not an array → 400', async () => {
    const body = JSON.stringify({ event: 'delivered' });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const res = await app.post('/api/email/webhooks/sendgrid', body, {
      'content-type': 'application/json',
      [SIGNATURE]: signPayload(privateKey, timestamp, body),
      [TIMESTAMP]: timestamp,
    });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { success: false, error: 'webhook body must be a JSON array of events.' });
  });

  it('checks the signature before parsing: an unsigned body is 401 whatever it holds, a signed malformed one 400', async () => {
    const timestamp = String(Math.floor(Date.now() / 1000));
    for (const body of ['[{"event": "delivered"', '[[[[', '{"a":']) {
      const unsigned = await app.post('/api/email/webhooks/sendgrid', body, {
        'content-type': 'application/json',
        [SIGNATURE]: signPayload(privateKey, timestamp, '[]'),
        [TIMESTAMP]: timestamp,
      });
      assert.equal(unsigned.status, 401, body);
      const signed = await app.post('/api/email/webhooks/sendgrid', body, {
        'content-type': 'application/json',
        [SIGNATURE]: signPayload(privateKey, timestamp, body),
        [TIMESTAMP]: timestamp,
      });
      assert.equal(signed.status, 400, body);
      assert.deepEqual(signed.body, {
        success: false,
        error: 'webhook body must be a JSON array of events.',
      });
    }
  });

  it('a body as large as SendGrid posts (768 KB, and the event that took it past) is read and applied; one over the 1 MiB limit is 413', async () => {
    const emailId = await sendOne();
    const batch: Array<Record<string, unknown>> = [event(emailId, 'delivered')];
    const padding = { ...event(randomUUID(), 'processed'), category: ['x'.repeat(200)] };
    while (JSON.stringify(batch).length < 768 * 1024) batch.push({ ...padding, sg_event_id: randomUUID() });
    // A large event last: SendGrid's custom arguments take up to 10,000 bytes.
    batch.push({ ...padding, unique_args: { note: 'y'.repeat(10_000) } });
    assert.ok(JSON.stringify(batch).length < bytesOf(WEBHOOK_BODY_LIMIT));
    assert.equal((await deliverEvents(batch)).status, 200);
    assert.equal((await record(emailId))?.['status'], 'delivered');

    const over = await app.post('/api/email/webhooks/sendgrid', '['.repeat(bytesOf(WEBHOOK_BODY_LIMIT) + 1), {
      'content-type': 'application/json',
    });
    assert.equal(over.status, 413);
    assert.deepEqual(over.body, { success: false, error: 'request body too large.' });
  });

  it('1 MiB of nested brackets: 400 at the 33rd level, before any signature or parse', async () => {
    const res = await app.post('/api/email/webhooks/sendgrid', '['.repeat(bytesOf(WEBHOOK_BODY_LIMIT)), {
      'content-type': 'application/json',
    });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, {
      success: false,
      error: 'request body nested too deeply. maximum depth is 32.',
    });
  });

  it('a compressed body is refused with 415 (SendGrid never compresses; nobody unproven gets a body inflated)', async () => {
    const res = await fetch(`${app.url}/api/email/webhooks/sendgrid`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync('[]'),
    });
    assert.equal(res.status, 415);
    assert.deepEqual(await res.json(), {
      success: false,
      error: 'this route takes an uncompressed body (no content encoding).',
    });
  });
});

describe('POST /api/email/webhooks/sendgrid without a configured public key', () => {
  const app = useEmailApp();

  it('refuses events with 503 and changes nothing', async () => {
    const sent = await app.post('/api/email/send', invoiceBody());
    const id = String(sent.body['email_id']);
    const res = await app.post('/api/email/webhooks/sendgrid', [
      { event: 'bounce', email_id: id, timestamp: 1 },
    ]);
    assert.equal(res.status, 503);
    assert.match(String(res.body['error']), /^webhook not configured/);
    const data = (await app.get(`/api/email/status/${id}`)).body['data'] as Record<string, unknown>;
    assert.equal(data['status'], 'sent');
  });
});

describe('POST /api/email/webhooks/sendgrid with SENDGRID_WEBHOOK_ALLOW_UNSIGNED=true', () => {
  const app = useEmailApp({ env: { SENDGRID_WEBHOOK_ALLOW_UNSIGNED: 'true' } });

  it('applies unsigned events (development setup)', async () => {
    const sent = await app.post('/api/email/send', invoiceBody());
    const id = String(sent.body['email_id']);
    const res = await app.post(
      '/api/email/webhooks/sendgrid',
      [{ event: 'delivered', email_id: id, timestamp: 1 }],
      {
        'content-type': 'application/json',
      },
    );
    assert.equal(res.status, 200);
    const data = (await app.get(`/api/email/status/${id}`)).body['data'] as Record<string, unknown>;
    assert.equal(data['delivered'], true);
    assert.equal(data['status'], 'delivered');
  });
});
