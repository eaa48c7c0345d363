import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { saveMessage } from '../../../core/dev-inbox/save-message.ts';
import { authenticatedAs } from '../../../core/identity.ts';
import { captureInto } from '../../../infra/mail-sink.ts';
import { TEMPLATE_IDS } from '../../../templates/index.ts';
import { SAMPLE_DATA } from '../../../templates/samples.ts';
import { AUTH, invoiceBody, useEmailApp, welcomeBody } from '../../../test/support/email-app.ts';

/** The page (or any answer) as text, with its status and headers. */
async function getText(base: string, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${path}`, { headers, redirect: 'manual' });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** The `id` of the first captured message whose row mentions `needle`. */
function idOf(page: string, needle: string): string {
  const rows = page.split('<li class="row').slice(1);
  const row = rows.find((r) => r.includes(needle));
  assert.ok(row, `no row mentions ${needle}`);
  return /data-id="([^"]+)"/.exec(row)![1]!;
}

const ENV = { AUTH_MODE: 'trusted-headers' };

describe('dev pages without DEV_INBOX_DIR (production, compose)', () => {
  const app = useEmailApp({ env: ENV });

  it('do not exist: 404 for the inbox, its events, the gallery and the assets', async () => {
    for (const path of [
      '/dev',
      '/dev/inbox',
      '/dev/inbox/events',
      '/dev/inbox/messages/x',
      '/dev/templates',
      '/dev/templates/invoice/html',
      '/dev/assets/dev.js',
    ]) {
      const answer = await getText(app.url, path);
      assert.equal(answer.status, 404, path);
      assert.deepEqual(JSON.parse(answer.text), { success: false, error: 'not found' });
    }
  });
});

describe('dev inbox (DEV_INBOX_DIR set: npm run dev with its mail sink)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-inbox-'));
  const app = useEmailApp({ env: { ...ENV, DEV_INBOX_DIR: dir } });
  before(() => captureInto(app.fake, { dir }));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('lists a sent message: time, recipient, subject, template and the record status', async () => {
    const sent = await app.post('/api/email/send', invoiceBody({ subject: 'Listed invoice INV-77' }));
    assert.equal(sent.status, 200);
    const page = await getText(app.url, '/dev/inbox');
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type')!, /^text\/html/);
    assert.match(page.headers.get('content-security-policy')!, /script-src 'self'/);
    const id = idOf(page.text, 'Listed invoice INV-77');
    const row = page.text.slice(page.text.indexOf(`data-id="${id}"`)).split('</li>')[0]!;
    assert.match(row, /customer@example\.com/);
    assert.match(row, /<span class="template">invoice<\/span>/);
    assert.match(row, /status-sent" title="status of the email record">sent</);
    assert.match(row, /<time datetime="\d{4}-\d\d-\d\dT/);
  });

  it('shows test-mode sends (never delivered) badged `test`, live ones not', async () => {
    const caller = {
      companyId: AUTH['x-company-id'],
      organizationId: AUTH['x-organization-id'],
      userId: AUTH['x-user-id'],
    };
    const test = { ...authenticatedAs(caller), test: true };
    await app.email.send(
      invoiceBody({ subject: 'Test-mode invoice INV-90', to: 'delivered@example.com' }),
      test,
    );
    await app.post('/api/email/send', invoiceBody({ subject: 'Live invoice INV-91' }));
    const page = await getText(app.url, '/dev/inbox');
    const rowOf = (id: string) => page.text.slice(page.text.indexOf(`data-id="${id}"`)).split('</li>')[0]!;
    const testId = idOf(page.text, 'Test-mode invoice INV-90');
    assert.match(rowOf(testId), /<span class="badge-test"[^>]*>test<\/span>/);
    assert.match(rowOf(testId), /status-delivered/);
    assert.doesNotMatch(rowOf(idOf(page.text, 'Live invoice INV-91')), /badge-test/);
    const view = await getText(app.url, `/dev/inbox/messages/${encodeURIComponent(testId)}`);
    assert.match(
      view.text,
      /<h2 class="message-subject">Test-mode invoice INV-90\s*<span class="badge-test"/,
    );
  });

  it('shows one message: recipients, headers, text part, HTML in a sandboxed iframe, attachments', async () => {
    const pdf = Buffer.from('%PDF-1.4 fake invoice bytes \u00e9');
    const sent = await app.post(
      '/api/email/send',
      invoiceBody({
        subject: 'Full view INV-78',
        cc: [{ email: 'accounts@example.com', name: 'Accounts' }],
        bcc: 'audit@example.com',
        reply_to: 'billing@acme.example',
        attachments: [
          { filename: 'INV-78.pdf', content: pdf.toString('base64'), contentType: 'application/pdf' },
        ],
      }),
    );
    assert.equal(sent.status, 200);
    const id = idOf((await getText(app.url, '/dev/inbox')).text, 'Full view INV-78');

    const view = await getText(app.url, `/dev/inbox/messages/${id}`);
    assert.equal(view.status, 200);
    const text = view.text;
    assert.match(text, /<h2 class="message-subject">Full view INV-78<\/h2>/);
    assert.match(text, /Accounts &lt;accounts@example\.com&gt;/);
    assert.match(text, /audit@example\.com/);
    assert.match(text, /<th scope="row">Reply-To<\/th><td>billing@acme\.example<\/td>/);
    assert.match(text, /<th scope="row">custom_args\.email_id \(SendGrid\)<\/th><td>/);
    assert.ok(text.includes(`<code>${sent.body['email_id']}</code>`), 'the email id of the record');
    // The text part, escaped, in a <pre>; the HTML part only behind the iframe.
    assert.match(text, /<pre class="text-part">[^<]*INV-1[^<]*<\/pre>/s);
    const iframe = /<iframe[^>]*id="html-frame"[^>]*>/s.exec(text)?.[0] ?? '';
    assert.match(iframe, /sandbox="allow-popups allow-popups-to-escape-sandbox"/);
    assert.doesNotMatch(iframe, /allow-scripts|allow-same-origin/);

    const html = await getText(app.url, `/dev/inbox/messages/${id}/html`);
    assert.equal(html.status, 200);
    const csp = html.headers.get('content-security-policy')!;
    assert.match(csp, /^sandbox allow-popups allow-popups-to-escape-sandbox; default-src 'none'/);
    assert.doesNotMatch(csp, /allow-scripts|script-src/);
    assert.match(html.text, /Jane Customer/);
    assert.doesNotMatch(html.text, /api\/email\/track\?view_key=/, 'the tracking pixel is left out');

    const link = /<a href="([^"]+)" download="INV-78\.pdf">/.exec(text)?.[1];
    assert.equal(link, `/dev/inbox/messages/${encodeURIComponent(id)}/attachments/0`);
    const res = await fetch(`${app.url}${link}`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/octet-stream');
    assert.match(res.headers.get('content-disposition')!, /^attachment; filename="INV-78\.pdf"/);
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), pdf);
    assert.equal((await getText(app.url, `/dev/inbox/messages/${id}/attachments/1`)).status, 404);

    const raw = await fetch(`${app.url}/dev/inbox/messages/${id}/raw`);
    assert.match(raw.headers.get('content-disposition')!, /^attachment/);
    assert.equal(((await raw.json()) as { subject: string }).subject, 'Full view INV-78');
  });

  it('downloads an attachment under its whole name, a name with slashes included', async () => {
    const sent = await app.post(
      '/api/email/send',
      invoiceBody({
        subject: 'Slashed name INV-79',
        attachments: [
          { filename: 'reports/2026-11.pdf', content: 'aGVsbG8=', contentType: 'application/pdf' },
        ],
      }),
    );
    assert.equal(sent.status, 200);
    const id = idOf((await getText(app.url, '/dev/inbox')).text, 'Slashed name INV-79');
    const res = await fetch(`${app.url}/dev/inbox/messages/${id}/attachments/0`);
    assert.equal(res.status, 200);
    // Not cut to its last segment (`2026-11.pdf`): the separator becomes `_`, as browsers save it.
    assert.match(res.headers.get('content-disposition')!, /^attachment; filename="reports_2026-11\.pdf"/);
  });

  it('escapes a hostile subject, recipient name and text part everywhere it shows them', async () => {
    const hostile = '<script>alert("subject")</script><img src=x onerror=alert(1)> & "quoted"';
    const sent = await app.post(
      '/api/email/send',
      welcomeBody({
        to: { email: 'eve@example.com', name: '<b onmouseover=alert(2)>Eve</b>' },
        subject: hostile,
        template_id: 'custom',
        template_data: {},
        html_body: '<p>Body</p><script>alert("body")</script><p>&lt;/pre&gt;<script>alert(3)</script></p>',
      }),
      AUTH,
    );
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    const escapedSubject =
      '&lt;script&gt;alert(&quot;subject&quot;)&lt;/script&gt;&lt;img src&#x3D;x onerror&#x3D;alert(1)&gt; &amp; &quot;quoted&quot;';
    const list = await getText(app.url, '/dev/inbox');
    const id = idOf(list.text, escapedSubject);
    const view = await getText(app.url, `/dev/inbox/messages/${id}`);
    for (const page of [list.text, view.text]) {
      assert.ok(page.includes(escapedSubject), 'the subject, escaped');
      assert.ok(!page.includes('<script>alert'), 'no script of the message in the page');
      assert.ok(!page.includes('<img src=x'), 'no markup of the message in the page');
      assert.ok(!page.includes('<b onmouseover'), 'no markup of the recipient name in the page');
    }
    assert.ok(view.text.includes('&lt;b onmouseover&#x3D;alert(2)&gt;Eve&lt;/b&gt; &lt;eve@example.com&gt;'));
    // The caller's HTML is served as is, but only under the sandbox policy.
    const html = await getText(app.url, `/dev/inbox/messages/${id}/html`);
    assert.ok(html.text.includes('<script>alert("body")</script>'));
    assert.match(html.headers.get('content-security-policy')!, /^sandbox allow-popups/);
    assert.doesNotMatch(html.headers.get('content-security-policy')!, /allow-scripts/);
  });

  it('reads what the sink saved before this gateway started (the folder is the inbox)', async () => {
    // A message saved by an earlier run, and one in the format of before received_at existed.
    const { id } = saveMessage(dir, {
      body: {
        from: { email: 'no-reply@mailroom.test' },
        subject: 'Saved by an earlier run',
        personalizations: [{ to: [{ email: 'earlier@example.com' }] }],
        content: [{ type: 'text/plain', value: 'from before the restart' }],
      },
      messageId: 'earlier-1',
      receivedAt: new Date('2026-01-02T03:04:05.678Z'),
    });
    const legacy = '2026-01-01T00-00-00-000Z-legacy@example.com';
    writeFileSync(
      join(dir, `${legacy}.json`),
      JSON.stringify({
        messageId: 'legacy-1',
        from: { email: 'no-reply@mailroom.test' },
        subject: 'Legacy format',
        personalizations: [{ to: [{ email: 'legacy@example.com' }] }],
        content: [{ type: 'text/html', value: '<p>old</p>' }],
      }),
    );
    writeFileSync(join(dir, 'not-a-message.json'), '{"hello":');

    const page = (await getText(app.url, '/dev/inbox')).text;
    assert.equal(idOf(page, 'Saved by an earlier run'), id);
    assert.equal(idOf(page, 'Legacy format'), legacy);
    assert.match(page, /<time datetime="2026-01-01T00:00:00\.000Z">/);
    assert.match(page, /status-none" title="status of the email record">none</);
    const view = await getText(app.url, `/dev/inbox/messages/${id}`);
    assert.match(view.text, /from before the restart/);
    assert.match(view.text, /This message has no HTML part/);
  });

  it('pushes each new message to open pages as a server-sent event, and replays what a reconnect missed', async () => {
    const controller = new AbortController();
    const res = await fetch(`${app.url}/dev/inbox/events?since=${Date.now()}`, { signal: controller.signal });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /^text\/event-stream/);
    const events = eventReader(res.body!);
    try {
      await app.post('/api/email/send', invoiceBody({ subject: 'Live one' }));
      const first = await events.next();
      assert.equal(first.event, 'mail');
      const data = JSON.parse(first.data) as { id: string; row: string };
      assert.equal(first.id, data.id);
      assert.match(data.row, /^<li class="row" data-id="/);
      assert.match(data.row, /Live one/);
      assert.match(
        data.row,
        /status-sent" title="status of the email record">sent</,
        'the event waits for the record to leave pending',
      );

      await app.post('/api/email/send', invoiceBody({ subject: 'Live two' }));
      assert.match((JSON.parse((await events.next()).data) as { row: string }).row, /Live two/);

      // A page that saw "Live one" and reconnects gets "Live two" again, and nothing older.
      const again = await fetch(`${app.url}/dev/inbox/events`, {
        headers: { 'Last-Event-ID': first.id! },
        signal: controller.signal,
      });
      const replay = await eventReader(again.body!).next();
      assert.match((JSON.parse(replay.data) as { row: string }).row, /Live two/);
    } finally {
      controller.abort();
    }
  });

  it('answers 404 for unknown messages and for ids that are not plain file names', async () => {
    for (const path of [
      '/dev/inbox/messages/nope',
      '/dev/inbox/messages/..%2F..%2Fetc%2Fpasswd',
      '/dev/inbox/messages/..%2Fsecret/html',
      '/dev/inbox/messages/not-a-message',
      '/dev/inbox/messages/nope/attachments/0',
      '/dev/inbox/messages/nope/raw',
    ]) {
      assert.equal((await getText(app.url, path)).status, 404, path);
    }
  });

  it('serves the template gallery: every template at 600px and 375px, rendered with its sample data', async () => {
    const page = await getText(app.url, '/dev/templates');
    assert.equal(page.status, 200);
    for (const id of TEMPLATE_IDS) {
      const src = `src="/dev/templates/${id}/html"`;
      assert.match(
        page.text,
        new RegExp(`<iframe class="desktop" title="${id} at 600px" sandbox [^>]*${src}`),
      );
      assert.match(page.text, new RegExp(`<iframe class="phone" title="${id} at 375px" sandbox [^>]*${src}`));
    }
    const html = await getText(app.url, '/dev/templates/invoice/html');
    assert.equal(html.status, 200);
    assert.match(html.headers.get('content-security-policy')!, /^sandbox /);
    assert.ok(html.text.includes(SAMPLE_DATA['invoice']!['INVOICE_NUMBER']!));
    const text = await getText(app.url, '/dev/templates/invoice/text');
    assert.match(text.headers.get('content-type')!, /^text\/plain/);
    assert.ok(text.text.includes(SAMPLE_DATA['invoice']!['AMOUNT_TOTAL']!));
    assert.equal((await getText(app.url, '/dev/templates/nope/html')).status, 404);
  });
});

/** Reads server-sent events one at a time from a response body. */
function eventReader(body: ReadableStream<Uint8Array>) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  return {
    async next(): Promise<{ id?: string; event?: string; data: string }> {
      for (;;) {
        const end = buffer.indexOf('\n\n');
        if (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const fields: { id?: string; event?: string; data: string } = { data: '' };
          for (const line of block.split('\n')) {
            const [name, ...rest] = line.split(': ');
            const value = rest.join(': ');
            if (name === 'id') fields.id = value;
            if (name === 'event') fields.event = value;
            if (name === 'data') fields.data += value;
          }
          if (fields.event) return fields;
          continue;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error('the event stream ended');
        buffer += value;
      }
    },
  };
}
