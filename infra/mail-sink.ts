import { saveMessage } from '../core/dev-inbox/mailbox.ts';
import { FakeSendGrid } from './fake-sendgrid.ts';

/**
 * `npm run dev` without SENDGRID_API_KEY: a local SendGrid v3 endpoint that
 * accepts every message and keeps it on disk instead of delivering it, so the
 * whole path (record → render → provider call → status) runs as in production.
 * The gateway's dev inbox (/dev/inbox, api/routes/dev/) shows what it saved;
 * the folder format is core/dev-inbox/mailbox.ts.
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
  /** Where a saved message can be seen (the dev inbox's page for it); default: its .html file. */
  linkTo?: (id: string, htmlFile: string) => string;
}): Promise<MailSink> {
  const fake = new FakeSendGrid();
  captureInto(fake, options);
  await fake.start(options.port ?? 0);
  return { url: fake.url, dir: options.dir, stop: () => fake.stop() };
}

/**
 * Saves every message `fake` accepts into `options.dir` (the sink's behaviour;
 * tests give it their FakeSendGrid to fill a dev inbox the same way).
 */
export function captureInto(
  fake: FakeSendGrid,
  options: { dir: string; log?: (line: string) => void; linkTo?: (id: string, htmlFile: string) => string },
): void {
  fake.onAccepted = (mail) => {
    try {
      const { id, htmlFile } = saveMessage(options.dir, { body: mail.body, messageId: mail.messageId });
      const to = mail.body.personalizations.flatMap((p) => p.to.map((r) => r.email)).join(', ') || 'unknown';
      options.log?.(`${to} / ${mail.body.subject}  →  ${options.linkTo?.(id, htmlFile) ?? htmlFile}`);
    } catch (err) {
      options.log?.(`could not save a message: ${err instanceof Error ? err.message : String(err)}`);
    }
    // Nothing is kept in memory: the dev server may run for days.
    fake.received.length = 0;
  };
}
