import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  isMessageId,
  listMessages,
  messagesAfter,
  readAttachment,
  readMessage,
  watchMailbox,
  type IncomingMessage,
} from './mailbox.ts';
import { saveMessage } from './save-message.ts';

const folders: string[] = [];
const folder = () => {
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-mailbox-'));
  folders.push(dir);
  return dir;
};
after(() => folders.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** A SendGrid v3 body as the provider client sends it. */
function body(overrides: Record<string, unknown> = {}): IncomingMessage['body'] {
  return {
    from: { email: 'no-reply@mailroom.test', name: 'Mailroom' },
    reply_to: { email: 'billing@acme.example' },
    subject: 'Your invoice',
    personalizations: [
      {
        to: [{ email: 'jane@example.com', name: 'Jane' }],
        cc: [{ email: 'accounts@example.com' }],
        bcc: [{ email: 'audit@example.com' }],
      },
    ],
    content: [
      { type: 'text/plain', value: 'Hi Jane' },
      { type: 'text/html', value: '<p>Hi Jane</p>' },
    ],
    attachments: [
      { content: Buffer.from('hello').toString('base64'), filename: 'a.txt', type: 'text/plain' },
    ],
    categories: ['billing'],
    custom_args: { email_id: 'e-1' },
    ...overrides,
  };
}

describe('dev mailbox folder', () => {
  it('reads back what it saved: addresses, parts, attachments, email id, time', () => {
    const dir = folder();
    const receivedAt = new Date('2026-11-23T09:14:03.512Z');
    const { id, htmlFile } = saveMessage(dir, { body: body(), messageId: 'sg-1', receivedAt });
    assert.match(id, /^2026-11-23T09-14-03-512Z-jane@example\.com-[0-9a-f]{6}$/);
    assert.equal(htmlFile, join(dir, `${id}.html`));
    assert.deepEqual(readdirSync(dir).sort(), [`${id}.html`, `${id}.json`]);

    const message = readMessage(dir, id)!;
    assert.equal(message.receivedAt.toISOString(), receivedAt.toISOString());
    assert.equal(message.messageId, 'sg-1');
    assert.equal(message.subject, 'Your invoice');
    assert.deepEqual(message.from, { email: 'no-reply@mailroom.test', name: 'Mailroom' });
    assert.deepEqual(message.replyTo, { email: 'billing@acme.example' });
    assert.deepEqual(message.to, [{ email: 'jane@example.com', name: 'Jane' }]);
    assert.deepEqual(message.cc, [{ email: 'accounts@example.com' }]);
    assert.deepEqual(message.bcc, [{ email: 'audit@example.com' }]);
    assert.equal(message.text, 'Hi Jane');
    assert.equal(message.html, '<p>Hi Jane</p>');
    assert.equal(message.emailId, 'e-1');
    assert.deepEqual(message.categories, ['billing']);
    assert.deepEqual(message.attachmentList, [{ filename: 'a.txt', type: 'text/plain', size: 5 }]);
    assert.deepEqual(readAttachment(dir, id, 0), {
      filename: 'a.txt',
      type: 'text/plain',
      content: Buffer.from('hello'),
    });
    assert.equal(readAttachment(dir, id, 1), undefined);
  });

  it('makes ids that are plain file names whatever the recipient address holds', () => {
    const dir = folder();
    const { id } = saveMessage(dir, {
      body: body({ personalizations: [{ to: [{ email: '../../etc/pa"ss wd@x..y' }] }] }),
      messageId: undefined,
    });
    assert.ok(isMessageId(id), id);
    assert.ok(!id.includes('/') && !id.includes('..'), id);
    assert.equal(readMessage(dir, id)?.to[0]?.email, '../../etc/pa"ss wd@x..y');
  });

  it('accepts only file-name ids', () => {
    for (const id of ['../secret', 'a/b', '..', '.hidden', 'a\\b', '', 'x'.repeat(300)])
      assert.equal(isMessageId(id), false, id);
    assert.equal(isMessageId('2026-11-23T09-14-03-512Z-jane@example.com-3f9a1c'), true);
  });

  it('lists newest first, skipping files that are not messages; a missing folder is empty', () => {
    const dir = folder();
    const older = saveMessage(dir, {
      body: body({ subject: 'older' }),
      messageId: '1',
      receivedAt: new Date(1000),
    });
    const newer = saveMessage(dir, {
      body: body({ subject: 'newer' }),
      messageId: '2',
      receivedAt: new Date(2000),
    });
    writeFileSync(join(dir, 'broken.json'), '{');
    writeFileSync(join(dir, 'other.json'), '{"not":"a message"}');
    writeFileSync(join(dir, 'notes.txt'), 'hello');
    assert.deepEqual(
      listMessages(dir).map((m) => m.subject),
      ['newer', 'older'],
    );
    assert.deepEqual(
      messagesAfter(dir, older.id)?.map((m) => m.id),
      [newer.id],
    );
    assert.deepEqual(messagesAfter(dir, newer.id), []);
    assert.equal(messagesAfter(dir, 'unknown'), undefined);
    rmSync(join(dir, `${newer.id}.json`));
    assert.deepEqual(
      listMessages(dir).map((m) => m.subject),
      ['older'],
    );
    assert.deepEqual(listMessages(join(dir, 'missing')), []);
  });

  it('tells a watcher about each message saved after it started, once', async () => {
    const dir = folder();
    saveMessage(dir, { body: body({ subject: 'before' }), messageId: '0' });
    const seen: string[] = [];
    let announce: (id: string) => void = () => undefined;
    const second = new Promise<string>((resolve) => (announce = resolve));
    const stop = watchMailbox(dir, (id) => {
      seen.push(id);
      if (seen.length === 2) announce(id);
    });
    // The watcher never holds the process open (a gateway stops without closing it): this test does.
    const keepAlive = setInterval(() => undefined, 1000);
    try {
      const first = saveMessage(dir, { body: body({ subject: 'one' }), messageId: '1' });
      const next = saveMessage(dir, { body: body({ subject: 'two' }), messageId: '2' });
      assert.equal(await second, next.id);
      assert.deepEqual(seen, [first.id, next.id]);
    } finally {
      clearInterval(keepAlive);
      stop();
    }
  });
});
