import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';

/** One request the fake received: what SendGrid would have seen. */
export interface ReceivedMail {
  headers: IncomingHttpHeaders;
  body: SendGridMailBody;
  messageId: string | undefined;
  status: number;
  /** Accepted, but the connection was dropped instead of answering. */
  dropped?: boolean;
}

/** The parts of SendGrid's v3 /mail/send body the tests look at. */
export interface SendGridMailBody {
  from: { email: string; name?: string };
  reply_to?: { email: string; name?: string };
  subject: string;
  personalizations: Array<{
    to: Array<{ email: string; name?: string }>;
    cc?: Array<{ email: string; name?: string }>;
    bcc?: Array<{ email: string; name?: string }>;
    custom_args?: Record<string, string>;
  }>;
  content: Array<{ type: string; value: string }>;
  attachments?: Array<{ content: string; filename: string; type?: string; disposition?: string }>;
  custom_args?: Record<string, string>;
  categories?: string[];
  [key: string]: unknown;
}

/** Event posts per message at most, 50 ms after acceptance and then four times further apart each (to about 13 s). */
const EVENT_POSTS = 5;
const EVENT_FIRST_DELAY_MS = 50;

/**
 * A planned answer: a status code; `network-error`, the connection dropped
 * once the request was read (the message NOT taken); `accept-then-drop`, the
 * message taken (it counts as accepted) and then the connection dropped after
 * `dropDelayMs` without an answer, as a provider timing out its side.
 */
export type PlannedAnswer = number | 'network-error' | 'accept-then-drop';

/**
 * A local stand-in for SendGrid's v3 `POST /v3/mail/send`, spoken to over real
 * HTTP by the real @sendgrid/mail client (pointed here by SENDGRID_BASE_URL).
 * By default it accepts (202 with an `X-Message-Id`); `plan()` queues other
 * answers: 400, 401, 403, 413, 429, 5xx or a dropped connection.
 *
 * Tests use it as a fake (test/support/fake-sendgrid.ts re-exports it);
 * `npm run dev` uses it as the local mail sink (infra/mail-sink.ts).
 */
export class FakeSendGrid {
  readonly received: ReceivedMail[] = [];
  /** Milliseconds to wait before answering each request (to hold a send "in flight"). */
  delayMs = 0;
  /** For `accept-then-drop`: how long the connection stays silent before it is dropped. */
  dropDelayMs = 0;
  /** While set, every request gets this status (an outage), whatever was planned. */
  outage: number | undefined;
  /**
   * Where to POST SendGrid-style Event Webhook batches (`processed` for every
   * accepted message), like SendGrid does; unset: no events.
   */
  eventsUrl: string | undefined;
  private readonly planned: PlannedAnswer[] = [];
  private server: Server | undefined;
  private waiters: Array<() => void> = [];
  /** Called with every accepted message (the dev mail sink saves them). */
  onAccepted: ((mail: ReceivedMail) => void) | undefined;
  /**
   * Chooses the answer for a message by its content (the dev mail sink's
   * behaviours by recipient address); undefined: the plan, else 202.
   */
  answerFor:
    ((body: SendGridMailBody) => { answer?: PlannedAnswer; delayMs?: number } | undefined) | undefined;

  /** Base URL to give SENDGRID_BASE_URL. */
  url = '';

  /** Requests that were accepted (202): the mail SendGrid would actually deliver. */
  get accepted(): ReceivedMail[] {
    return this.received.filter((r) => r.status === 202);
  }

  /** Queue answers for the next requests, in order; after them, 202 again. */
  plan(...answers: PlannedAnswer[]): void {
    this.planned.push(...answers);
  }

  reset(): void {
    this.received.length = 0;
    this.planned.length = 0;
    this.delayMs = 0;
    this.dropDelayMs = 0;
    this.outage = undefined;
    this.eventsUrl = undefined;
  }

  /** Resolves once at least `count` requests have arrived. */
  async waitForRequests(count: number, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.received.length < count) {
      if (Date.now() > deadline)
        throw new Error(`fake SendGrid got ${this.received.length} of ${count} requests`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }

  /** Listens on `port` (default: any free one) and sets `url`. */
  async start(port = 0, host = '127.0.0.1'): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        void (async () => {
          if (req.method !== 'POST' || req.url !== '/v3/mail/send') {
            res.writeHead(404, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ errors: [{ message: 'not found' }] }));
            return;
          }
          let body: SendGridMailBody;
          try {
            body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as SendGridMailBody;
          } catch {
            res.writeHead(400, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ errors: [{ message: 'Bad Request: body is not JSON' }] }));
            return;
          }
          const chosen = this.answerFor?.(body);
          const answer = this.outage ?? chosen?.answer ?? this.planned.shift() ?? 202;
          const dropped = answer === 'accept-then-drop';
          const status = answer === 'network-error' ? 0 : dropped ? 202 : answer;
          const messageId = status === 202 ? randomUUID().replace(/-/g, '').slice(0, 22) : undefined;
          // This request's own entry: others may be counted while it is held below.
          const mail: ReceivedMail = {
            headers: req.headers,
            body,
            messageId,
            status,
            ...(dropped ? { dropped } : {}),
          };
          this.received.push(mail);
          this.waiters.splice(0).forEach((w) => w());
          // Held after it is counted: a test that waited for the request knows it is in flight.
          const holdMs = this.delayMs + (chosen?.delayMs ?? 0);
          if (holdMs) await new Promise((r) => setTimeout(r, holdMs));
          if (status === 202) this.sendEvents(body, messageId);
          if (answer === 'network-error') {
            req.socket.destroy();
            return;
          }
          if (dropped) {
            this.onAccepted?.(mail);
            setTimeout(() => req.socket.destroy(), this.dropDelayMs);
            return;
          }
          if (status === 202) {
            this.onAccepted?.(mail);
            res.writeHead(202, { 'x-message-id': messageId });
            res.end();
            return;
          }
          if (status === 401 || !String(req.headers.authorization ?? '').startsWith('Bearer ')) {
            res.writeHead(401, { 'content-type': 'application/json' });
            res.end(
              JSON.stringify({
                errors: [{ message: 'The provided authorization grant is invalid, expired, or revoked' }],
              }),
            );
            return;
          }
          const messages: Record<number, string> = {
            400: 'The from address does not match a verified Sender Identity.',
            403: 'access forbidden',
            413: 'The JSON payload you have included in your request is too large.',
            429: 'Too many requests',
          };
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ errors: [{ message: messages[status] ?? 'Internal server error' }] }));
        })();
      });
    });
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(port, host, resolve);
    });
    this.url = `http://${host}:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /**
   * SendGrid's `processed` event for an accepted message, to `eventsUrl`. Like
   * SendGrid, a post that gets no 2xx (a gateway restarting, a balancer's 502)
   * is posted again later; here a few times over some seconds, where SendGrid
   * keeps trying for a day.
   */
  private sendEvents(body: SendGridMailBody, messageId: string | undefined): void {
    const url = this.eventsUrl;
    const emailId = body.custom_args?.['email_id'] ?? body.personalizations[0]?.custom_args?.['email_id'];
    if (!url || !emailId) return;
    const event = {
      event: 'processed',
      email_id: emailId,
      email: body.personalizations[0]?.to[0]?.email,
      timestamp: Math.floor(Date.now() / 1000),
      sg_message_id: `${messageId}.filter`,
    };
    const post = (attempt: number) =>
      setTimeout(
        () => {
          fetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify([event]),
          })
            .then((res) => res.ok)
            .catch(() => false)
            .then((delivered) => {
              if (!delivered && attempt < EVENT_POSTS && this.eventsUrl === url) post(attempt + 1);
            });
        },
        EVENT_FIRST_DELAY_MS * 4 ** (attempt - 1),
      ).unref();
    post(1);
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }
}
