import { Client as SendGridClient } from '@sendgrid/client';
import { Mail } from '@sendgrid/helpers/classes/index.js';
import { MailService, type MailDataRequired } from '@sendgrid/mail';
import type { Config } from '../../config.ts';
import { MailroomError } from '../../errors.ts';
import { parseMailbox, type Address } from '../addresses.ts';
import { providerRejected, providerUnavailable } from '../email-messages.ts';
import { createProviderAgents, failedBeforeConnecting } from './provider-connections.ts';

/**
 * Delivery through SendGrid's v3 Mail Send API with the official client.
 * Each provider owns its Client instance (not the package's shared singleton),
 * so two services in one process (tests, gateway + worker) never share a key.
 */

export interface OutgoingAttachment {
  filename: string;
  /** base64 */
  content: string;
  type?: string | undefined;
}

export interface OutgoingMail {
  emailId: string;
  from: Address;
  to: Address[];
  cc: Address[];
  bcc: Address[];
  replyTo?: Address | undefined;
  subject: string;
  html: string;
  text: string;
  attachments: OutgoingAttachment[];
  categories: string[];
  /**
   * How long this send may wait for a provider's rate (provider-rate.ts)
   * before it is refused there: an HTTP send's short bound, a bulk's longer one.
   */
  rateWaitMs?: number;
  /**
   * Called right before the message is handed to a provider, after the wait
   * for its rate, by a provider that `waitsForRate` (hand-over.ts): the send
   * pipeline marks its record there. Idempotent (failover may call it again
   * for the next provider). Its failure stops the send, wrapped in
   * HandOverFailed.
   */
  beforeHandOver?: () => Promise<void>;
}

export interface MailProvider {
  /** Recorded on the email as `provider` (`sendgrid`, `smtp`). */
  name: string;
  /**
   * True when `send` may wait for a rate before handing the message over; it
   * then calls `mail.beforeHandOver` after that wait. Otherwise the caller
   * does its before-hand-over work itself, before `send`.
   */
  waitsForRate?: boolean;
  /**
   * Resolves with the provider's message id; throws MailroomError 'transient'
   * (the provider did not take the message), 'provider_rejected' (it refused
   * it for good) or 'outcome_unknown' (it may have taken it: no answer came
   * back after the request was sent).
   */
  send(
    mail: OutgoingMail,
  ): Promise<{ providerId: string; /** Which one took it, behind failover. */ provider?: string }>;
}

/** How long one Mail Send call may take before it counts as a transient failure. */
const SEND_TIMEOUT_MS = 30_000;

/** Undefined when no API key is configured: sends then fail with `email service not configured.` */
export function createSendGridProvider(config: Config): MailProvider | undefined {
  const apiKey = config.sendgrid.apiKey;
  if (!apiKey) return undefined;
  const client = new SendGridClient();
  client.setApiKey(apiKey);
  // After setApiKey, which resets the base URL to SendGrid's own.
  client.setDefaultRequest('baseUrl', config.sendgrid.baseUrl);
  // Connections watched until ready: a failure before then fails over (provider-connections.ts).
  const { httpAgent, httpsAgent } = createProviderAgents(config.sendgrid.connectTimeoutMs);
  // The client merges its default request into axios' config as it is; its types list fewer keys.
  client.setDefaultRequest({ httpAgent, httpsAgent } as unknown as Parameters<
    typeof client.setDefaultRequest
  >[0]);
  const mail = new MailService();
  mail.setClient(client);
  mail.setTimeout(SEND_TIMEOUT_MS);

  return {
    name: 'sendgrid',
    async send(message) {
      try {
        const built = new Mail({
          from: message.from,
          ...(message.replyTo ? { replyTo: message.replyTo } : {}),
          personalizations: [
            {
              to: message.to.map(quotedName),
              ...(message.cc.length ? { cc: message.cc.map(quotedName) } : {}),
              ...(message.bcc.length ? { bcc: message.bcc.map(quotedName) } : {}),
            },
          ],
          subject: message.subject,
          text: message.text,
          html: message.html,
          ...(message.categories.length ? { categories: message.categories } : {}),
          // The Event Webhook echoes custom args on every event: how events find their record.
          customArgs: { email_id: message.emailId },
          hideWarnings: true,
        });
        // Set on the built message, not passed to its constructor, which copies
        // its data through JSON: large attachments held the event loop (docs/benchmarks.md).
        if (message.attachments.length)
          built.setAttachments(
            message.attachments.map((a) => ({
              filename: a.filename,
              content: a.content,
              ...(a.type ? { type: a.type } : {}),
              disposition: 'attachment',
            })),
          );
        // A Mail instance is sent as it is (Mail.create passes one through).
        const [response] = await mail.send(built as unknown as MailDataRequired);
        const header = (response.headers as Record<string, unknown>)['x-message-id'];
        return { providerId: typeof header === 'string' && header ? header : '' };
      } catch (err) {
        throw classifyProviderError(err);
      }
    },
  };
}

/**
 * SendGrid's v3 API takes a recipient's name as is, and documents that it
 * must not contain `,` or `;`: it answers 202 and then drops the message as
 * invalid, having read part of the name as an address. Such a name ("Doe,
 * Jane", "Acme, Inc.") goes quoted, as an RFC 5322 quoted string, which is
 * SendGrid's documented way to carry them; the recipient sees the name.
 */
export function quotedName(address: Address): Address {
  const { name } = address;
  if (name === undefined || !/[,;]/.test(name)) return address;
  return { ...address, name: `"${name.replace(/[\\"]/g, '\\$&')}"` };
}

export function defaultSender(config: Config): Address {
  return parseMailbox(config.emailFrom) ?? { email: config.emailFrom };
}

/**
 * Network errors that happen before a request can have reached the provider:
 * the message was certainly not taken, so sending again is safe.
 */
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH']);

/**
 * 429 and 5xx answers, and failures before the connection was ready (refused,
 * DNS, no answer to the connect within SENDGRID_CONNECT_TIMEOUT_MS, TLS
 * refused: provider-connections.ts), are worth retrying: the provider said it
 * did not take the message, or never heard of it. So are 401 and 403: the
 * account, not the message, was refused (a key wrong, revoked or without the
 * Mail Send permission, a sender identity not verified), as an SMTP relay's
 * authentication failure is; another provider may take it, and a retry
 * succeeds once the operator fixes the account. Any other 4xx is the
 * provider's final word on the message. Every other network failure (a
 * timeout, a connection reset or closed before the answer) may come after the
 * provider accepted the message: its outcome is unknown.
 */
/** SendGrid's answers that refuse the account (authentication, permission), never the message. */
const ACCOUNT_REFUSED = new Set([401, 403]);

export function classifyProviderError(err: unknown): MailroomError {
  const e = err as { code?: unknown; message?: unknown; response?: { body?: unknown } };
  const status = typeof e?.code === 'number' ? e.code : undefined;
  if (status === undefined || !e.response) {
    const code = typeof e?.code === 'string' ? e.code : undefined;
    const detail = code ?? String(e?.message ?? 'network error');
    const notConnected = (code !== undefined && NOT_CONNECTED.has(code)) || failedBeforeConnecting(err);
    const kind = notConnected ? 'transient' : 'outcome_unknown';
    return new MailroomError(kind, providerUnavailable(detail), { cause: err });
  }
  const detail = firstProviderMessage(e.response.body) ?? `HTTP ${status}`;
  if (status === 429 || status >= 500 || ACCOUNT_REFUSED.has(status))
    return new MailroomError('transient', providerUnavailable(`HTTP ${status} ${detail}`), { cause: err });
  return new MailroomError('provider_rejected', providerRejected(detail), { cause: err });
}

function firstProviderMessage(body: unknown): string | undefined {
  const errors = (body as { errors?: Array<{ message?: unknown }> } | undefined)?.errors;
  const message = Array.isArray(errors) ? errors[0]?.message : undefined;
  return typeof message === 'string' && message ? message : undefined;
}
