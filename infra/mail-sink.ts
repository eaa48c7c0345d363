import { saveMessage } from '../core/dev-inbox/save-message.ts';
import { FakeSendGrid, type PlannedAnswer, type SendGridMailBody } from './fake-sendgrid.ts';

/**
 * `npm run dev` without SENDGRID_API_KEY: a local SendGrid v3 endpoint that
 * accepts every message and keeps it on disk instead of delivering it, so the
 * whole path (record → render → provider call → status) runs as in production.
 * The gateway's dev inbox (/dev/inbox, api/routes/dev/) shows what it saved;
 * the folder format is core/dev-inbox/mailbox.ts.
 *
 * Some recipient addresses make it misbehave like a real provider, so retries,
 * cancellation and bounces can be watched (docs/workflows.md has the table):
 * the local part (before `@`, ignoring a `+tag`) of any to/cc/bcc address.
 */
export const SINK_BEHAVIOURS = {
  /** Answers 503 every time: the step is retried until its attempts run out. */
  'fail-503': 'answers 503 to every attempt',
  /** Answers 503 to the first attempt of each message, then accepts. */
  'fail-once': 'answers 503 to the first attempt of each message, then accepts it',
  /** Holds each message before accepting it. */
  slow: 'holds each message 20 s, then accepts it',
  /** Accepts, then reports a bounce through the gateway's SendGrid webhook. */
  bounce: 'accepts, then posts a `bounce` event to the gateway’s SendGrid webhook 1 s later',
  /** Answers 400 (a rejection; not retried). */
  reject: 'answers 400 (the provider rejects the message)',
} as const;
export type SinkBehaviour = keyof typeof SINK_BEHAVIOURS;

export const SLOW_MS = 20_000;
const BOUNCE_AFTER_MS = 1000;

/** The behaviour a message asks for through its recipients, if any. */
export function behaviourOf(body: SendGridMailBody): SinkBehaviour | undefined {
  const addresses = body.personalizations.flatMap((p) => [...p.to, ...(p.cc ?? []), ...(p.bcc ?? [])]);
  for (const { email } of addresses) {
    const local = email.split('@')[0]!.split('+')[0]!.toLowerCase();
    if (Object.hasOwn(SINK_BEHAVIOURS, local)) return local as SinkBehaviour;
  }
  return undefined;
}
export interface MailSink {
  url: string;
  dir: string;
  /** The gateway's SendGrid Event Webhook, for `bounce@…` (unset: bounces are not reported). */
  webhookUrl: string | undefined;
  stop(): Promise<void>;
}

export async function startMailSink(options: {
  dir: string;
  port?: number;
  log: (line: string) => void;
  webhookUrl?: string;
  /** How long `slow@…` holds a message (default 20 s). */
  slowMs?: number;
  /** Where a saved message can be seen (the dev inbox's page for it); default: its .html file. */
  linkTo?: (id: string, htmlFile: string) => string;
}): Promise<MailSink> {
  const fake = new FakeSendGrid();
  // Messages (by email id) whose first attempt fail-once already failed; bounded.
  const failedOnce = new Set<string>();
  const timers = new Set<NodeJS.Timeout>();
  const sink: MailSink = {
    url: '',
    dir: options.dir,
    webhookUrl: options.webhookUrl,
    stop: () => {
      for (const timer of timers) clearTimeout(timer);
      return fake.stop();
    },
  };
  fake.answerFor = (body) => {
    const behaviour = behaviourOf(body);
    if (!behaviour) return undefined;
    const emailId = emailIdOf(body) ?? JSON.stringify([body.subject, body.personalizations]);
    const to = body.personalizations[0]?.to[0]?.email ?? '?';
    let chosen: { answer?: PlannedAnswer; delayMs?: number } = {};
    if (behaviour === 'fail-503') chosen = { answer: 503 };
    if (behaviour === 'reject') chosen = { answer: 400 };
    if (behaviour === 'slow') chosen = { delayMs: options.slowMs ?? SLOW_MS };
    if (behaviour === 'fail-once' && !failedOnce.has(emailId)) {
      if (failedOnce.size > 10_000) failedOnce.clear();
      failedOnce.add(emailId);
      chosen = { answer: 503 };
    }
    if (behaviour === 'bounce' && sink.webhookUrl && emailIdOf(body)) {
      const url = sink.webhookUrl;
      const timer = setTimeout(() => {
        timers.delete(timer);
        void postBounce(url, emailIdOf(body)!, to).then(options.log);
      }, BOUNCE_AFTER_MS);
      timers.add(timer);
    }
    const what =
      chosen.answer !== undefined
        ? `answering ${chosen.answer}`
        : chosen.delayMs
          ? `holding it ${chosen.delayMs / 1000} s`
          : 'accepting it';
    options.log(`${to}: ${behaviour}, ${what}`);
    return chosen;
  };
  captureInto(fake, options);
  await fake.start(options.port ?? 0);
  sink.url = fake.url;
  return sink;
}

function emailIdOf(body: SendGridMailBody): string | undefined {
  const id = body.custom_args?.['email_id'] ?? body.personalizations[0]?.custom_args?.['email_id'];
  return typeof id === 'string' && id ? id : undefined;
}

/** What SendGrid's Event Webhook would post for a bounce. */
async function postBounce(url: string, emailId: string, to: string): Promise<string> {
  const event = {
    event: 'bounce',
    email: to,
    email_id: emailId,
    timestamp: Math.floor(Date.now() / 1000),
    type: 'bounce',
    reason: '550 5.1.1 The email account that you tried to reach does not exist (dev mail sink)',
  };
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([event]),
      signal: AbortSignal.timeout(5000),
    });
    return `${to}: bounce reported to the webhook (${res.status})`;
  } catch (err) {
    return `${to}: could not report the bounce: ${err instanceof Error ? err.message : String(err)}`;
  }
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
