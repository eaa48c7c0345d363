import { createTransport, type Transporter } from 'nodemailer';
import { encodeWord } from 'nodemailer/lib/mime-funcs';
import { MailroomError } from '../../../errors.ts';
import type { Address } from '../../addresses.ts';
import { providerRejected, providerUnavailable } from '../../email-messages.ts';
import type { MailProvider, OutgoingMail } from '../provider.ts';

/** nodemailer's address form: it encodes display names itself (no header injection). */
const mailbox = (a: Address) => (a.name ? { name: a.name, address: a.email } : a.email);

/**
 * The Subject header. nodemailer encodes a subject with non-ASCII text, but
 * sends an ASCII one as it is, so one that holds an RFC 2047 encoded-word
 * (`=?UTF-8?B?SGFja2Vk?=`) would be shown decoded ("Hacked"). Such a subject
 * is encoded whole (RFC 2047 §5: text that could be taken for an
 * encoded-word must be encoded), so the reader sees what was sent.
 */
function subjectHeader(subject: string): string {
  return subject.includes('=?') ? encodeWord(subject, 'B', 52) : subject;
}

/** How long an SMTP conversation may take, per phase, before it counts as failed. */
const SMTP_TIMEOUT_MS = 30_000;

/**
 * Delivery through any SMTP relay (Postfix, Amazon SES SMTP, Mailgun,
 * Postmark SMTP…) with nodemailer, configured by SMTP_URL
 * (`smtp://user:pass@host:587`, `smtps://…:465`). The message carries
 * `X-Mailroom-Email-Id`; SMTP has no event webhook, so an SMTP-sent record
 * moves on only through the pixel and clicks.
 */
export function createSmtpProvider(url: string): MailProvider {
  // Timeouts ride on the URL's query (nodemailer reads options from it); a URL's own win.
  const withTimeouts = new URL(url);
  for (const option of ['connectionTimeout', 'greetingTimeout', 'socketTimeout'])
    if (!withTimeouts.searchParams.has(option))
      withTimeouts.searchParams.set(option, String(SMTP_TIMEOUT_MS));
  const transport: Transporter = createTransport(withTimeouts.toString());
  return {
    name: 'smtp',
    async send(message: OutgoingMail) {
      try {
        const info = await transport.sendMail({
          from: mailbox(message.from),
          to: message.to.map(mailbox),
          cc: message.cc.map(mailbox),
          bcc: message.bcc.map(mailbox),
          ...(message.replyTo ? { replyTo: mailbox(message.replyTo) } : {}),
          subject: subjectHeader(message.subject),
          text: message.text,
          html: message.html,
          headers: { 'X-Mailroom-Email-Id': message.emailId },
          attachments: message.attachments.map((a) => ({
            filename: a.filename,
            content: a.content,
            encoding: 'base64',
            ...(a.type ? { contentType: a.type } : {}),
          })),
          // Never read files or URLs named in the message (nodemailer can).
          disableFileAccess: true,
          disableUrlAccess: true,
        });
        return { providerId: info.messageId };
      } catch (err) {
        throw classifySmtpError(err);
      }
    },
  };
}

/** Failures that happen before any message can have gone out: nothing was taken. */
const NOT_CONNECTED = /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH/;
const BEFORE_MESSAGE_CODES = new Set(['EDNS', 'EAUTH', 'ETLS', 'EENVELOPE']);
/** nodemailer's timeouts of the connection's setup (connect, greeting, STARTTLS); not its socket timeout, which may come after DATA. */
const SETUP_TIMEOUTS = new Set(['CONNECT_TIMEOUT', 'GREETING_TIMEOUT', 'UPGRADE_TIMEOUT']);
/** Certificate and handshake failures of an implicit-TLS (smtps) connection: before any command. */
const TLS_HANDSHAKE =
  /^(ERR_SSL_|ERR_TLS_|EPROTO$|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$|UNABLE_TO_|CERT_)/;

/**
 * What an SMTP failure says about the message:
 * - the relay answered 5xx (mailbox unknown, content refused): rejected for good;
 * - it answered 4xx (greylisting, too busy), or the failure came before the
 *   message could go out (connection refused, DNS, TLS, authentication, the
 *   envelope refused, no connection or greeting in time): not taken, safe to
 *   send again, here or elsewhere;
 * - anything else (a timeout, a dropped connection): nodemailer does not say
 *   reliably in which phase, and after DATA the relay may have the message,
 *   so its outcome is unknown (never sent again: at most once).
 */
export function classifySmtpError(err: unknown): MailroomError {
  const e = err as {
    code?: unknown;
    originalCode?: unknown;
    timeoutType?: unknown;
    responseCode?: unknown;
    response?: unknown;
    message?: unknown;
  };
  const responseCode = typeof e?.responseCode === 'number' ? e.responseCode : undefined;
  const detail = String(e?.response ?? e?.message ?? 'SMTP error').slice(0, 300);
  if (responseCode !== undefined && responseCode >= 500)
    return new MailroomError('provider_rejected', providerRejected(detail), { cause: err });
  const notTaken =
    (responseCode !== undefined && responseCode >= 400) ||
    (typeof e?.code === 'string' && BEFORE_MESSAGE_CODES.has(e.code)) ||
    (typeof e?.timeoutType === 'string' && SETUP_TIMEOUTS.has(e.timeoutType)) ||
    (typeof e?.originalCode === 'string' && TLS_HANDSHAKE.test(e.originalCode)) ||
    NOT_CONNECTED.test(String(e?.message ?? ''));
  return new MailroomError(
    notTaken ? 'transient' : 'outcome_unknown',
    providerUnavailable(`SMTP ${detail}`),
    {
      cause: err,
    },
  );
}
