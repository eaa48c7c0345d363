import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { STATUS_RANK, statusOf, type EmailRecord } from '../../../core/email/records/record.ts';
import { newViewKey } from '../../../core/email/tracking/view-key.ts';
import { invoiceBody, useEmailApp } from '../../../test/support/email-app.ts';

const GIF_HEX = '47494638396101000100800000ffffff00000021f90401000000002c00000000010001000002024401003b';

describe('tracking endpoints', () => {
  const app = useEmailApp();

  /** Sends one email and returns its id and the view key embedded in the pixel SendGrid received. */
  async function sendOne(): Promise<{ emailId: string; viewKey: string }> {
    const before = app.fake.accepted.length;
    const res = await app.post('/api/email/send', invoiceBody());
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const html = app.fake.accepted[before]!.body.content.find((c) => c.type === 'text/html')!.value;
    const viewKey = /view_key=([A-Za-z0-9_-]+)/.exec(html)?.[1];
    assert.ok(viewKey, 'the pixel carries the view key');
    return { emailId: String(res.body['email_id']), viewKey };
  }
  /** The stored record, its status spelled out (the database holds only the rank). */
  const record = async (emailId: string) => {
    const doc = await app.database.db.collection<EmailRecord>('emails').findOne({ _id: emailId });
    return doc && { ...doc, status: statusOf(doc) };
  };
  const status = async (emailId: string) =>
    (await app.get(`/api/email/status/${emailId}`)).body['data'] as Record<string, unknown>;

  /** One pixel hit; the open is buffered, so the buffer is flushed before the test reads the record. */
  async function pixel(query: string) {
    const res = await fetch(`${app.url}/api/email/track${query}`);
    const bytes = Buffer.from(await res.arrayBuffer());
    await app.email.flushOpens();
    return { res, bytes };
  }

  describe('GET /api/email/track (pixel)', () => {
    it('answers the 43-byte transparent GIF with no-cache headers and records the open', async () => {
      const { emailId, viewKey } = await sendOne();
      const startedAt = Date.now();
      const { res, bytes } = await pixel(`?view_key=${viewKey}`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'image/gif');
      assert.equal(res.headers.get('cache-control'), 'no-store, no-cache, must-revalidate');
      assert.equal(bytes.length, 43);
      assert.equal(bytes.toString('hex'), GIF_HEX);

      const data = await status(emailId);
      assert.equal(data['opened'], true);
      assert.equal(data['status'], 'opened');
      const stored = await record(emailId);
      assert.ok(stored?.['time'] instanceof Date);
      assert.ok((stored['time'] as Date).getTime() >= startedAt - 1000);
    });

    it('a HEAD (a mail scanner) gets the GIF headers and records no open', async () => {
      const { emailId, viewKey } = await sendOne();
      const res = await fetch(`${app.url}/api/email/track?view_key=${viewKey}`, { method: 'HEAD' });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'image/gif');
      assert.equal(res.headers.get('content-length'), '43');
      await app.email.flushOpens();
      assert.equal((await status(emailId))['opened'], false);
      assert.equal((await status(emailId))['status'], 'sent');
      await pixel(`?view_key=${viewKey}`);
      assert.equal((await status(emailId))['opened'], true, 'a GET still is');
    });

    it('a second open updates time and stays opened', async () => {
      const { emailId, viewKey } = await sendOne();
      await pixel(`?view_key=${viewKey}`);
      const first = (await record(emailId))?.['time'] as Date;
      await new Promise((r) => setTimeout(r, 20));
      await pixel(`?view_key=${viewKey}`);
      const second = await record(emailId);
      assert.ok((second?.['time'] as Date).getTime() > first.getTime());
      assert.equal(second?.['status'], 'opened');
    });

    it('unknown, malformed or missing key: same GIF, nothing changes', async () => {
      const { emailId } = await sendOne();
      for (const query of [
        '?view_key=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
        '?view_key=%00%22',
        '',
        '?view_key=',
      ]) {
        const { res, bytes } = await pixel(query);
        assert.equal(res.status, 200, query);
        assert.equal(res.headers.get('content-type'), 'image/gif');
        assert.equal(bytes.toString('hex'), GIF_HEX);
      }
      assert.equal((await status(emailId))['opened'], false);
    });
    it('a well-formed key for another id, or with a wrong secret part: same GIF, nothing changes', async () => {
      const { emailId, viewKey } = await sendOne();
      for (const key of [
        newViewKey(randomUUID()),
        newViewKey(emailId),
        viewKey.slice(0, -1) + (viewKey.endsWith('A') ? 'B' : 'A'),
      ]) {
        const { res, bytes } = await pixel(`?view_key=${key}`);
        assert.equal(res.status, 200, key);
        assert.equal(bytes.toString('hex'), GIF_HEX);
      }
      const data = await status(emailId);
      assert.equal(data['opened'], false);
      assert.equal(data['status'], 'sent');
    });

    it('many opens, repeats among them: each recorded, a later status never moved back', async () => {
      const a = await sendOne();
      const b = await sendOne();
      const bounced = await sendOne();
      await app.database.db
        .collection<EmailRecord>('emails')
        .updateOne({ _id: bounced.emailId }, { $set: { status_rank: STATUS_RANK.bounced } });
      const before = app.email.openStats();
      const hits = [a, b, a, bounced, a].map((e) =>
        fetch(`${app.url}/api/email/track?view_key=${e.viewKey}`).then((r) => r.arrayBuffer()),
      );
      await Promise.all(hits);
      await app.email.flushOpens();
      const after = app.email.openStats();
      assert.equal(after.accepted - before.accepted, 5, 'every hit accepted');
      assert.equal(after.dropped, before.dropped);
      for (const e of [a, b]) {
        const data = await status(e.emailId);
        assert.equal(data['opened'], true);
        assert.equal(data['status'], 'opened');
      }
      const stillBounced = await status(bounced.emailId);
      assert.equal(stillBounced['opened'], true);
      assert.equal(stillBounced['status'], 'bounced');
    });
  });

  describe('POST /api/email/track', () => {
    it('a view key reports at most 30 events a minute: the next is 429 with Retry-After', async () => {
      const { viewKey } = await sendOne();
      const post = () => app.post('/api/email/track', { view_key: viewKey, event_type: 'opened' }, {});
      for (let i = 0; i < 30; i++) assert.equal((await post()).status, 200);
      const over = await post();
      assert.equal(over.status, 429);
      assert.deepEqual(over.body, {
        success: false,
        error: 'too many events for this email. try again later.',
      });
      assert.ok(Number(over.headers.get('retry-after')) >= 1);
      // Another email's key is not held back.
      const other = await sendOne();
      const res = await app.post('/api/email/track', { view_key: other.viewKey, event_type: 'opened' }, {});
      assert.equal(res.status, 200);
    });

    it('delivered → delivered flag and status', async () => {
      const { emailId, viewKey } = await sendOne();
      const res = await app.post('/api/email/track', { view_key: viewKey, event_type: 'delivered' }, {});
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { success: true });
      const data = await status(emailId);
      assert.equal(data['delivered'], true);
      assert.equal(data['status'], 'delivered');
      assert.equal(data['opened'], false);
    });

    it('opened → opened flag, time, status', async () => {
      const { emailId, viewKey } = await sendOne();
      assert.equal(
        (await app.post('/api/email/track', { view_key: viewKey, event_type: 'opened' }, {})).status,
        200,
      );
      const stored = await record(emailId);
      assert.equal(stored?.['opened'], true);
      assert.equal(stored?.['status'], 'opened');
      assert.ok(stored?.['time'] instanceof Date);
    });

    it('clicked → clicked flag and counts as an open', async () => {
      const { emailId, viewKey } = await sendOne();
      assert.equal(
        (await app.post('/api/email/track', { view_key: viewKey, event_type: 'clicked' }, {})).status,
        200,
      );
      const stored = await record(emailId);
      assert.equal(stored?.['clicked'], true);
      assert.equal(stored?.['opened'], true);
      assert.equal(stored?.['status'], 'opened');
    });

    it('order independent: delivered after opened keeps opened; repeats are harmless', async () => {
      const { emailId, viewKey } = await sendOne();
      for (const event_type of ['opened', 'delivered', 'delivered', 'opened', 'clicked', 'delivered']) {
        const res = await app.post('/api/email/track', { view_key: viewKey, event_type }, {});
        assert.equal(res.status, 200);
      }
      const data = await status(emailId);
      assert.equal(data['status'], 'opened');
      assert.equal(data['opened'], true);
      assert.equal(data['delivered'], true);
    });

    it('an event_type outside delivered/opened/clicked → 400 listing them', async () => {
      const { viewKey } = await sendOne();
      const res = await app.post('/api/email/track', { view_key: viewKey, event_type: 'bounced' }, {});
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, {
        success: false,
        error: 'invalid event_type. expected one of: delivered, opened, clicked.',
      });
    });

    it('unknown view key → 404 email not found.', async () => {
      const res = await app.post(
        '/api/email/track',
        { view_key: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', event_type: 'opened' },
        {},
      );
      assert.equal(res.status, 404);
      assert.deepEqual(res.body, { success: false, error: 'email not found.' });
    });

    it('a key with the right email id but a wrong secret part → 404, nothing changes', async () => {
      const { emailId, viewKey } = await sendOne();
      for (const key of [
        newViewKey(randomUUID()),
        newViewKey(emailId),
        viewKey.slice(0, -1) + (viewKey.endsWith('A') ? 'B' : 'A'),
      ]) {
        const res = await app.post('/api/email/track', { view_key: key, event_type: 'delivered' }, {});
        assert.equal(res.status, 404, key);
        assert.deepEqual(res.body, { success: false, error: 'email not found.' });
      }
      const data = await status(emailId);
      assert.equal(data['delivered'], false);
      assert.equal(data['status'], 'sent');
    });

    it('missing fields and unknown fields → 400', async () => {
      let res = await app.post('/api/email/track', { event_type: 'opened' }, {});
      assert.equal(res.status, 400);
      assert.equal(res.body['error'], 'missing required fields: view_key');
      res = await app.post(
        '/api/email/track',
        { view_key: 'k'.repeat(32), event_type: 'opened', extra: 1 },
        {},
      );
      assert.equal(res.status, 400);
      assert.equal(res.body['error'], 'unknown field: extra.');
      res = await app.post('/api/email/track', 'nope', { 'content-type': 'text/plain' });
      assert.equal(res.status, 415);
    });
  });
});
