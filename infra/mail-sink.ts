import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeSendGrid, type ReceivedMail } from './fake-sendgrid.ts';

/**
 * `npm run dev` without SENDGRID_API_KEY: a local SendGrid v3 endpoint that
 * accepts every message and keeps it on disk instead of delivering it, so the
 * whole path (record → render → provider call → status) runs as in production
 * and the rendered email can be opened in a browser.
 */
export interface MailSink {
  url: string;
  dir: string;
  stop(): Promise<void>;
}

export async function startMailSink(options: {
  dir: string;
  port?: number;
  log: (line: string) => void;
}): Promise<MailSink> {
  mkdirSync(options.dir, { recursive: true });
  const fake = new FakeSendGrid();
  fake.onAccepted = (mail) => {
    try {
      const { html, to } = save(options.dir, mail);
      options.log(`${to} / ${mail.body.subject}  →  ${html}`);
    } catch (err) {
      options.log(`could not save a message: ${err instanceof Error ? err.message : String(err)}`);
    }
    // Nothing is kept in memory: the dev server may run for days.
    fake.received.length = 0;
  };
  await fake.start(options.port ?? 0);
  return { url: fake.url, dir: options.dir, stop: () => fake.stop() };
}

function save(dir: string, mail: ReceivedMail): { html: string; to: string } {
  const to = mail.body.personalizations.flatMap((p) => p.to.map((r) => r.email)).join(', ') || 'unknown';
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  // Recipient addresses come from API callers: keep only filename-safe characters.
  const safeTo = to
    .split(',')[0]!
    .trim()
    .replace(/[^a-zA-Z0-9@._-]/g, '_')
    .slice(0, 80);
  const base = join(dir, `${stamp}-${safeTo}`);
  const htmlPart = mail.body.content.find((c) => c.type === 'text/html');
  const textPart = mail.body.content.find((c) => c.type === 'text/plain');
  const html = `${base}.html`;
  writeFileSync(html, htmlPart?.value ?? `<pre>${escapeHtml(textPart?.value ?? '')}</pre>`);
  writeFileSync(`${base}.json`, JSON.stringify({ messageId: mail.messageId, ...mail.body }, null, 2));
  return { html, to };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
