import { verify as verifySignature } from 'node:crypto';
import { MailroomError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { webhookEventType, webhookEvents } from '../metrics.ts';
import {
  INVALID_WEBHOOK_SIGNATURE,
  WEBHOOK_BODY_NOT_ARRAY,
  WEBHOOK_NOT_CONFIGURED,
  WEBHOOK_TIMESTAMP_OUTSIDE_WINDOW,
} from './email-messages.ts';
import { isUuid } from '../identity.ts';
import { sendgridVerificationKey } from './webhook-key.ts';
import type { EmailRecord, TrackedEvent } from './records/index.ts';
import type { RecordStore } from './records/index.ts';
import { listOwner, normalizeAddress, type SuppressionStore } from './suppressions/index.ts';
import { suppressionReasonOf, type WebhookEventFields } from './suppressions/index.ts';
import { isPlainObject } from '../validation.ts';

/**
 * SendGrid's Event Webhook (POST /api/email/webhooks/sendgrid).
 *
 * With SENDGRID_WEBHOOK_PUBLIC_KEY set, every request must carry a valid
 * ECDSA signature over `timestamp + raw body` (SendGrid's "Signed Event
 * Webhook") and a timestamp within REPLAY_WINDOW_SECONDS of now, so a
 * captured request cannot be replayed later. Without a key the webhook
 * refuses events (503) unless SENDGRID_WEBHOOK_ALLOW_UNSIGNED=true (dev):
 * otherwise any recipient could mark their email bounced.
 * Events find their record through the `email_id` custom arg every send sets
 * (SendGrid puts custom args at the top level of each event): the record's
 * `_id`, so each event is one primary-key update. A hard bounce, a spam
 * report or an unsubscribe also puts the recipient on the suppression list of
 * the company that sent the email (suppressions-from-webhook.ts). SendGrid
 * reports each recipient apart (the event's `email`); the record's status
 * follows its `to` recipients, so an event naming a cc or bcc (or nobody the
 * email was sent to) changes no status: a cc's hard bounce suppresses that
 * cc, and the email still counts as delivered to `to`. Unknown ids and
 * event types are ignored and the answer is 2xx either way: a non-2xx makes
 * SendGrid retry for 24 hours, which cannot help.
 */

export const SIGNATURE_HEADER = 'x-twilio-email-event-webhook-signature';
export const TIMESTAMP_HEADER = 'x-twilio-email-event-webhook-timestamp';

/** SendGrid event name → what it means for the record. */
const EVENT_MAP: Record<string, TrackedEvent> = {
  processed: 'processed',
  delivered: 'delivered',
  open: 'opened',
  click: 'clicked',
  bounce: 'bounced',
  dropped: 'bounced',
};

type Headers = Record<string, string | string[] | undefined>;

/** The fields of one SendGrid event Mailroom reads (untrusted: every one checked before use). */
type WebhookEvent = WebhookEventFields & { email_id?: unknown; timestamp?: unknown; email?: unknown };

const header = (headers: Headers, name: string): string | undefined => {
  const found = Object.entries(headers).find(([k]) => k.toLowerCase() === name)?.[1];
  return Array.isArray(found) ? found[0] : found;
};

/** How far a signed request's timestamp may be from now (SendGrid sends at once; clocks drift a little). */
export const REPLAY_WINDOW_SECONDS = 600;

export function createWebhookHandler(deps: {
  records: RecordStore;
  suppressions: SuppressionStore;
  publicKey: string | undefined;
  allowUnsigned: boolean;
  logger: Logger;
}) {
  const key = deps.publicKey ? sendgridVerificationKey(deps.publicKey) : undefined;

  function verify(rawBody: string, headers: Headers): void {
    if (!key) {
      if (deps.allowUnsigned) return;
      throw new MailroomError('unavailable', WEBHOOK_NOT_CONFIGURED);
    }
    const signature = header(headers, SIGNATURE_HEADER);
    const timestamp = header(headers, TIMESTAMP_HEADER);
    if (timestamp !== undefined && !withinReplayWindow(timestamp))
      throw new MailroomError('unauthorized', WEBHOOK_TIMESTAMP_OUTSIDE_WINDOW);
    let valid = false;
    if (signature && timestamp) {
      try {
        // ECDSA P-256 over SHA-256 of timestamp + body, the signature DER in base64 (SendGrid's
        // scheme). Node's native verify: ~0.1 ms; @sendgrid/eventwebhook's pure-JavaScript ECDSA
        // took ~9 ms of the event loop per forged request, a stall anyone could buy.
        valid = verifySignature(
          'sha256',
          Buffer.from(timestamp + rawBody),
          key,
          Buffer.from(signature, 'base64'),
        );
      } catch {
        valid = false; // malformed signature encoding
      }
    }
    if (!valid) throw new MailroomError('unauthorized', INVALID_WEBHOOK_SIGNATURE);
  }

  function withinReplayWindow(timestamp: string): boolean {
    const seconds = Number(timestamp);
    return Number.isFinite(seconds) && Math.abs(Date.now() / 1000 - seconds) <= REPLAY_WINDOW_SECONDS;
  }

  /**
   * Suppresses the event's recipient for the company that sent the email; only
   * an address the email was sent to (an event cannot name someone else).
   */
  async function suppress(emailId: string, e: WebhookEvent, record: EmailRecord | null): Promise<boolean> {
    const reason = suppressionReasonOf(e);
    if (!reason || typeof e.email !== 'string' || !record?.company_id) return false;
    const { to, cc, bcc } = record.recipients;
    if (!isAmong(e.email, [...to, ...cc, ...bcc])) return false;
    const address = normalizeAddress(e.email);
    await deps.suppressions.add({
      // A test send's events (none reach a provider, but a forged one could) touch test data only.
      company_id: listOwner(record.company_id, record.test),
      email: address,
      reason,
      source: 'webhook',
      detail: typeof e.reason === 'string' ? e.reason.slice(0, 500) : null,
      email_id: emailId,
    });
    deps.logger.info({ email_id: emailId, reason }, 'recipient suppressed by a provider event');
    return true;
  }

  /** The records that events naming a recipient refer to (those that may change something), each read once per batch. */
  async function recordsNamed(
    parsed: ReadonlyArray<{ e: WebhookEvent; emailId: string | undefined; mapped: TrackedEvent | undefined }>,
  ): Promise<Map<string, EmailRecord | null>> {
    const names = ({ e, emailId, mapped }: (typeof parsed)[number]) =>
      emailId !== undefined &&
      typeof e.email === 'string' &&
      (mapped !== undefined || suppressionReasonOf(e) !== undefined);
    const ids = [...new Set(parsed.filter(names).map(({ emailId }) => emailId!))];
    const found = await Promise.all(ids.map((id) => deps.records.findById(id)));
    return new Map(ids.map((id, i) => [id, found[i] ?? null]));
  }

  /** SendGrid's `timestamp` is Unix seconds; now if absent or absurd. */
  const eventTime = (timestamp: unknown): Date =>
    typeof timestamp === 'number' && timestamp > 0 && timestamp < 1e11
      ? new Date(timestamp * 1000)
      : new Date();

  return async function handleSendGridWebhook(
    rawBody: string,
    headers: Headers,
  ): Promise<{ applied: number }> {
    verify(rawBody, headers);
    let events: unknown;
    try {
      events = JSON.parse(rawBody);
    } catch {
      throw new MailroomError('validation', WEBHOOK_BODY_NOT_ARRAY);
    }
    if (!Array.isArray(events)) throw new MailroomError('validation', WEBHOOK_BODY_NOT_ARRAY);
    // Record updates in bulk (one round trip per OPEN_WRITE_CHUNK events), then the suppressions.
    const parsed = events.map((raw) => {
      const e: WebhookEvent = isPlainObject(raw) ? raw : {};
      const emailId = isUuid(e.email_id) ? e.email_id.toLowerCase() : undefined;
      const mapped = typeof e.event === 'string' ? EVENT_MAP[e.event] : undefined;
      return { e, emailId, mapped };
    });
    const named = await recordsNamed(parsed);
    const counted = parsed.map(
      ({ e, emailId, mapped }) =>
        emailId !== undefined && mapped !== undefined && namesToRecipient(e, named.get(emailId)),
    );
    const existing = await deps.records.applyEvents(
      parsed.flatMap(({ e, emailId, mapped }, i) =>
        counted[i] ? [{ emailId: emailId!, event: mapped!, at: eventTime(e.timestamp) }] : [],
      ),
    );
    let applied = 0;
    for (const [i, { e, emailId }] of parsed.entries()) {
      let changed = counted[i]! && existing.has(emailId!);
      if (emailId && (await suppress(emailId, e, named.get(emailId) ?? null))) changed = true;
      webhookEvents.inc({ type: webhookEventType(e.event), result: changed ? 'applied' : 'ignored' });
      if (changed) applied++;
    }
    deps.logger.debug({ received: events.length, applied }, 'sendgrid webhook');
    return { applied };
  };
}

/**
 * Whether an event may move its record's status: it names one of the
 * record's `to` recipients, or no recipient at all (nothing to compare), or
 * the record is unknown (the write then matches nothing).
 */
function namesToRecipient(e: WebhookEvent, record: EmailRecord | null | undefined): boolean {
  return typeof e.email !== 'string' || !record || isAmong(e.email, record.recipients.to);
}

/** Whether `email` is one of `recipients`, compared as the suppression list compares addresses. */
function isAmong(email: string, recipients: ReadonlyArray<{ email: string }>): boolean {
  const address = normalizeAddress(email);
  return recipients.some((r) => normalizeAddress(r.email) === address);
}
