import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import {
  listMessages,
  messagesAfter,
  readAttachment,
  readMessage,
  watchMailbox,
  type CapturedMessage,
  type MessageSummary,
} from '../../../core/dev-inbox/mailbox.ts';
import type { Address } from '../../../core/email/addresses.ts';
import type { RecordOutcome } from '../../../core/email/contract.ts';
import type { AppContext, AppDeps, AppRouter } from '../../types.ts';
import { EMAIL_CSP, sendEmailHtml, sendPage } from './respond.ts';
import { renderInbox, renderRow, type MessageView, type RowView } from './views.ts';

/**
 * The dev inbox: what the dev mail sink captured (core/dev-inbox/mailbox.ts),
 * with each message's record from the `emails` collection (its template and
 * status). The folder is the only state: restart the gateway and the inbox is
 * the same; new files appear on open pages through server-sent events.
 *
 *   GET /dev/inbox                                     the list
 *   GET /dev/inbox/messages/:id                        the list and one message
 *   GET /dev/inbox/messages/:id/html                   its HTML part, sandboxed (for the iframe)
 *   GET /dev/inbox/messages/:id/raw                    the stored SendGrid request (download)
 *   GET /dev/inbox/messages/:id/attachments/:index     one attachment (download)
 *   GET /dev/inbox/events                              server-sent events: `mail` per new message
 */

/** Rows on one page, newest first: each needs a record lookup. */
const LIST_LIMIT = 200;
/** How long a new message's event waits for its record to leave `pending` (the sink saves before it answers). */
const SETTLE_MS = 2_000;
const HEARTBEAT_MS = 15_000;

export function mountInbox(router: AppRouter, deps: AppDeps, dir: string): void {
  const watch = sharedWatch(dir);

  /** Through the email service's contract, like every other reader of records. */
  async function recordOf(emailId: string | undefined): Promise<RecordOutcome | null> {
    return emailId ? deps.email.outcomeOf(emailId).catch(() => null) : null;
  }

  async function rowsOf(summaries: MessageSummary[], selected?: string): Promise<RowView[]> {
    const rows: RowView[] = [];
    // A few lookups at a time: each is one `_id` read.
    for (let i = 0; i < summaries.length; i += 20) {
      const chunk = summaries.slice(i, i + 20);
      const found = await Promise.all(chunk.map((m) => recordOf(m.emailId)));
      chunk.forEach((m, j) => rows.push(rowView(m, found[j] ?? null, m.id === selected)));
    }
    return rows;
  }

  async function page(ctx: AppContext, message: CapturedMessage | undefined): Promise<void> {
    // Before listing: a message saved while the page renders is sent again by the events stream.
    const since = Date.now() - 2_000;
    const all = listMessages(dir);
    const rows = await rowsOf(all.slice(0, LIST_LIMIT), message?.id);
    sendPage(
      ctx,
      renderInbox({
        title: message ? message.subject || '(no subject)' : 'Inbox',
        page: 'inbox',
        dir,
        count: all.length,
        hidden: Math.max(0, all.length - LIST_LIMIT),
        eventsUrl: `/dev/inbox/events?since=${since}`,
        rows,
        message: message && messageView(message, await recordOf(message.emailId)),
      }),
    );
  }

  router.get('/dev', (ctx) => ctx.redirect('/dev/inbox'));
  router.get('/dev/inbox', (ctx) => page(ctx, undefined));

  router.get('/dev/inbox/messages/:id', async (ctx) => {
    const message = readMessage(dir, ctx.params['id']!);
    if (message) await page(ctx, message);
  });

  router.get('/dev/inbox/messages/:id/html', (ctx) => {
    const message = readMessage(dir, ctx.params['id']!);
    if (message?.html !== undefined) sendEmailHtml(ctx, forInspection(message.html));
  });

  router.get('/dev/inbox/messages/:id/raw', (ctx) => {
    const id = ctx.params['id']!;
    if (!readMessage(dir, id)) return;
    ctx.attachment(`${id}.json`);
    ctx.type = 'application/json';
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.body = readFileSync(join(dir, `${id}.json`));
  });

  router.get('/dev/inbox/messages/:id/attachments/:index', (ctx) => {
    const index = Number(ctx.params['index']);
    const attachment = Number.isInteger(index) && readAttachment(dir, ctx.params['id']!, index);
    if (!attachment) return;
    // Always a download, never rendered here: attachments are untrusted content. A path
    // separator would have the header cut the name to its last segment: `_` instead.
    ctx.attachment(attachment.filename.replace(/[/\\]/g, '_'));
    ctx.type = 'application/octet-stream';
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Content-Security-Policy', EMAIL_CSP);
    ctx.body = attachment.content;
  });

  router.get('/dev/inbox/events', (ctx) => {
    const stream = new PassThrough();
    ctx.req.socket.setTimeout(0);
    ctx.req.socket.setNoDelay(true);
    ctx.status = 200;
    ctx.type = 'text/event-stream';
    ctx.set({ 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no' });
    ctx.body = stream;

    let open = true;
    const sent = new Set<string>();
    let queue = Promise.resolve();
    const push = (id: string) => {
      queue = queue
        .then(async () => {
          if (!open || sent.has(id)) return;
          sent.add(id);
          const message = readMessage(dir, id);
          if (!message) return;
          const record = await settledRecord(message.emailId);
          if (!open) return;
          const row = renderRow(rowView(message, record, false));
          stream.write(`id: ${id}\nevent: mail\ndata: ${JSON.stringify({ id, row })}\n\n`);
        })
        .catch((err: unknown) => deps.logger.warn({ err, id }, 'dev inbox: could not send a message event'));
    };

    async function settledRecord(emailId: string | undefined): Promise<RecordOutcome | null> {
      const deadline = Date.now() + SETTLE_MS;
      for (;;) {
        const record = await recordOf(emailId);
        if (!record || record.status !== 'pending' || Date.now() > deadline) return record;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }

    // Watch first, then send what the page missed: nothing falls in between (duplicates are skipped).
    const unsubscribe = watch.subscribe(push);
    stream.write('retry: 2000\n\n');
    for (const missed of backlog(dir, ctx.get('Last-Event-ID'), Number(ctx.query['since']))) push(missed.id);
    const heartbeat = setInterval(() => stream.write(': ping\n\n'), HEARTBEAT_MS);
    const close = () => {
      if (!open) return;
      open = false;
      clearInterval(heartbeat);
      unsubscribe();
      stream.end();
    };
    ctx.res.once('close', close);
    stream.once('error', close);
  });
}

/** What a (re)connecting page has not seen: after its last event, else since it rendered. */
function backlog(dir: string, lastEventId: string, since: number): MessageSummary[] {
  const after = lastEventId ? messagesAfter(dir, lastEventId) : undefined;
  if (after) return after;
  if (!Number.isFinite(since)) return [];
  return listMessages(dir)
    .filter((m) => m.receivedAt.getTime() >= since)
    .reverse();
}

/** One folder watcher per gateway, shared by every open page; closed when the last one leaves. */
function sharedWatch(dir: string): { subscribe(listener: (id: string) => void): () => void } {
  const listeners = new Set<(id: string) => void>();
  let stop: (() => void) | undefined;
  return {
    subscribe(listener) {
      listeners.add(listener);
      stop ??= watchMailbox(dir, (id) => listeners.forEach((l) => l(id)));
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0) {
          stop?.();
          stop = undefined;
        }
      };
    },
  };
}

// ---------------------------------------------------------------- view models

const href = (id: string) => `/dev/inbox/messages/${encodeURIComponent(id)}`;
const timeLabel = (at: Date) => `${at.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
const mailbox = (a: Address) => (a.name ? `${a.name} <${a.email}>` : a.email);
const mailboxes = (list: Address[]) => list.map(mailbox).join(', ');
/** The record's status; `none` when the message has no record (another database, or not sent by Mailroom). */
const statusLabel = (record: RecordOutcome | null) => record?.status ?? 'none';

function rowView(m: MessageSummary, record: RecordOutcome | null, selected: boolean): RowView {
  return {
    id: m.id,
    href: href(m.id),
    time: m.receivedAt.toISOString(),
    timeLabel: timeLabel(m.receivedAt),
    subject: m.subject,
    to: mailboxes(m.to),
    template: record?.template_id,
    status: statusLabel(record),
    test: record?.test === true,
    attachments: m.attachments,
    selected,
  };
}

function messageView(m: CapturedMessage, record: RecordOutcome | null): MessageView {
  const headers: Array<{ name: string; value: string }> = [
    { name: 'Date', value: m.receivedAt.toUTCString() },
    { name: 'From', value: m.from ? mailbox(m.from) : '' },
  ];
  if (m.replyTo) headers.push({ name: 'Reply-To', value: mailbox(m.replyTo) });
  headers.push({ name: 'To', value: mailboxes(m.to) });
  if (m.cc.length) headers.push({ name: 'Cc', value: mailboxes(m.cc) });
  if (m.bcc.length) headers.push({ name: 'Bcc', value: mailboxes(m.bcc) });
  headers.push({ name: 'Subject', value: m.subject });
  if (m.messageId) headers.push({ name: 'X-Message-Id', value: m.messageId });
  for (const [name, value] of Object.entries(m.headers)) headers.push({ name, value });
  if (m.categories.length) headers.push({ name: 'categories (SendGrid)', value: m.categories.join(', ') });
  for (const [name, value] of Object.entries(m.customArgs))
    headers.push({ name: `custom_args.${name} (SendGrid)`, value });
  return {
    id: m.id,
    subject: m.subject,
    from: m.from ? mailbox(m.from) : '',
    to: mailboxes(m.to),
    cc: mailboxes(m.cc),
    bcc: mailboxes(m.bcc),
    time: m.receivedAt.toISOString(),
    timeLabel: timeLabel(m.receivedAt),
    template: record?.template_id,
    status: statusLabel(record),
    test: record?.test === true,
    error: record?.error ?? undefined,
    emailId: m.emailId,
    hasHtml: m.html !== undefined,
    htmlHref: `${href(m.id)}/html`,
    rawHref: `${href(m.id)}/raw`,
    text: m.text,
    attachments: m.attachmentList.map((a, index) => ({
      filename: a.filename,
      type: a.type ?? 'unknown type',
      size: sizeLabel(a.size),
      href: `${href(m.id)}/attachments/${index}`,
    })),
    headers,
  };
}

function sizeLabel(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * The HTML part as the inbox shows it: without Mailroom's tracking pixel (so
 * looking at a message does not record an open) and with links opening
 * outside the sandboxed frame.
 */
function forInspection(html: string): string {
  const withoutPixel = html.replace(
    /<img src="[^"]*\/api\/email\/track\?view_key=[^"]*" width="1" height="1" alt="">/g,
    '',
  );
  const base = '<base target="_blank">';
  return /<head(\s[^>]*)?>/i.test(withoutPixel)
    ? withoutPixel.replace(/<head(\s[^>]*)?>/i, (tag) => `${tag}${base}`)
    : `${base}${withoutPixel}`;
}
