import { randomUUID } from 'node:crypto';
import type { Db } from 'mongodb';
import { renderEmail } from '../../../templates/engine.ts';
import { CUSTOM_TEMPLATE_ID } from '../../../templates/index.ts';
import { MailroomError, isMailroomError } from '../../errors.ts';
import { authenticatedAs, type Principal } from '../../identity.ts';
import type { SenderPolicy } from './senders/sender-policy.ts';
import type { Logger } from '../../logger.ts';
import { isPlainObject } from '../../validation.ts';
import { scheduledSendKey, type ScheduledSendResult } from '../../workflows/scheduled-send.ts';
import { authorizeSend } from '../auth.ts';
import {
  BODY_NOT_OBJECT,
  SCHEDULED_MESSAGE,
  SCHEDULED_REQUEST_LOST,
  SCHEDULED_TOO_LARGE,
} from '../email-messages.ts';
import type { ScheduledResult, SendResult } from '../email-schema.ts';
import type { StepSendKeys } from '../idempotency/step-send-keys.ts';
import { newRecord } from '../records/new-record.ts';
import { STATUS_RANK } from '../records/record.ts';
import type { RecordStore } from '../records/record-store.ts';
import type { HtmlRenderPool } from '../tracking/html-render-pool.ts';
import { validateSendBody, type NormalizedSend } from '../validate.ts';
import { cancelScheduled, type CancelOutcome } from './scheduled-cancel.ts';
import { listScheduled, type ScheduledPage } from './scheduled-list.ts';
import { parseSendAt } from './send-at.ts';
import { createPendingSchedules, type PendingLimits } from './scheduled-pending.ts';
import {
  scheduledStore,
  type ScheduledDoc,
  type ScheduledPosition,
  type ScheduledStore,
} from './scheduled-store.ts';

/**
 * Scheduled sends (`send_at` on POST /api/email/send and per bulk item).
 *
 * At request time the send is authorised (an authenticated caller with all
 * three ids: a schedule belongs to a company), validated and rendered once
 * exactly as a send would be, so a request that could never be sent is a 400
 * now, not a failure in a month. Then, in this order: the email's
 * exactly-once send key is reserved for its id (step-send-keys.ts), its
 * record is written (`pending`, with `send_at`), and the request is stored
 * for later (scheduled-store.ts). The gateway then starts the email's
 * workflow run (workflows/scheduled-send.ts), which sleeps on a durable
 * timer and calls `sendDue`.
 *
 * At send time the stored request goes through the same core as any send
 * (`send`, with the reserved key): validated again, attachments given by URL
 * fetched then (not at request time: the caller's file as it is when the
 * email goes), suppressions checked then, rendered, delivered. The key makes
 * it one email whatever is retried or restarted (send-claim.ts), and it is
 * what cancelling takes to decide the race with a send (scheduled-cancel.ts).
 */

/** The largest stored request: MongoDB documents end at 16 MB. */
export const SCHEDULED_BODY_MAX_CHARS = 12 * 1024 * 1024;

export interface ScheduledSendsApi {
  /** Validates, records and stores a send with `send_at`; answers at once. */
  schedule(body: unknown, principal: Principal): Promise<ScheduledResult>;
  /** The workflow's send step: sends the stored request once, or says what became of it. */
  sendDue(emailId: string): Promise<ScheduledSendResult>;
  /** DELETE /api/email/scheduled/{id}: the caller's own pending email, cancelled; else 404 / 409. */
  cancel(emailId: string, principal: Principal): Promise<void>;
  /** The run was cancelled (an operator in the Web UI, or the DELETE above): the email, if still pending. */
  cancelDue(emailId: string): Promise<CancelOutcome>;
  /** The run is over: its stored request is dropped. */
  forget(emailId: string): Promise<void>;
  /** The caller's company's pending scheduled emails, a page at a time by send_at. */
  list(principal: Principal, after: ScheduledPosition | undefined, limit: number): Promise<ScheduledPage>;
  /** Scheduled emails whose run was not started (Temporal was unreachable): the outbox's work. */
  unstarted(before: Date, limit: number): Promise<Array<Omit<ScheduledDoc, 'body'>>>;
  /** Their run exists now. */
  markStarted(emailId: string): Promise<void>;
}

export interface ScheduledSendsDeps {
  db: Db;
  records: RecordStore;
  keys: StepSendKeys;
  customHtml: HtmlRenderPool;
  blockedDomains: readonly string[];
  /**
   * Which `from` a company may use (senders/sender-policy.ts): checked when
   * scheduled, so a `from` no list allows is refused at once rather than
   * failing at its time (`send` checks it again then, as for every send).
   */
  senders: Pick<SenderPolicy, 'check'>;
  /** What one company (per mode) may keep scheduled (scheduled-pending.ts). */
  pendingLimits: PendingLimits;
  /** The email core's own send (service.ts): validation, attachments, the send pipeline. */
  send: (body: unknown, principal: Principal, options: { idempotencyKey: string }) => Promise<SendResult>;
  logger: Logger;
}

export function createScheduledSends(deps: ScheduledSendsDeps): ScheduledSendsApi {
  const { records, keys, logger } = deps;
  const stored = scheduledStore(deps.db);
  const pending = createPendingSchedules(deps.db, deps.pendingLimits, (owner) => stored.held(owner));
  /** The stored requests, whose removal frees its company's place. */
  const store: ScheduledStore = {
    ...stored,
    async remove(emailId) {
      const gone = await stored.remove(emailId);
      // A count left high is repaired by the recount when it refuses (scheduled-pending.ts).
      if (gone)
        await pending.release(gone.owner, gone.chars).catch((err: unknown) => {
          logger.warn({ err, email_id: emailId }, 'scheduled email: freeing its place in the count failed');
        });
      return gone;
    },
  };

  /** Renders once and throws what rendering would throw at send time (custom HTML too complex…). */
  async function checkRenders(input: NormalizedSend, companyId: string): Promise<void> {
    if (input.templateId !== CUSTOM_TEMPLATE_ID)
      renderEmail({
        templateId: input.templateId,
        data: input.templateData,
        subject: input.subject,
        trackingPixelUrl: undefined,
      });
    else
      await deps.customHtml.render(
        {
          htmlBody: input.htmlBody ?? '',
          subject: input.subject,
          trackingPixelUrl: undefined,
          findLinks: input.trackClicks,
        },
        companyId,
      );
  }

  /** Sent, failed or cancelled: what the run reports for a record no longer pending. */
  async function fateOf(emailId: string): Promise<ScheduledSendResult | undefined> {
    const record = await records.findById(emailId);
    if (!record || record.status_rank === STATUS_RANK.pending) return undefined;
    if (record.error_kind === 'cancelled') return { emailId, status: 'cancelled' };
    if (record.status_rank === STATUS_RANK.failed)
      return { emailId, status: 'failed', error: record.error ?? 'email sending failed.' };
    return { emailId, status: 'sent', providerId: record.provider_id ?? '' };
  }

  return {
    async schedule(body, principal) {
      const identity = authorizeSend(principal, true);
      if (!isPlainObject(body)) throw new MailroomError('validation', BODY_NOT_OBJECT);
      const { send_at: rawSendAt, ...request } = body;
      const sendAt = parseSendAt(rawSendAt, new Date());
      const input = validateSendBody(request, deps.blockedDomains);
      if (input.from) await deps.senders.check(identity.companyId, input.from.email);
      await checkRenders(input, identity.companyId ?? '');
      const requestText = JSON.stringify(request);
      if (requestText.length > SCHEDULED_BODY_MAX_CHARS)
        throw new MailroomError('validation', SCHEDULED_TOO_LARGE);

      const emailId = randomUUID();
      const key = scheduledSendKey(emailId);
      const test = principal.test === true;
      const admission = await pending.admit(
        { companyId: identity.companyId!, test },
        emailId,
        requestText.length,
      );
      try {
        // No lease taken (it expired at the epoch): the run's send step takes it.
        await keys.reserveFirst(key, emailId, new Date(0));
        await records.insert({ ...newRecord(input, identity, emailId, key, test), send_at: sendAt });
        await store.insert({
          _id: emailId,
          company_id: identity.companyId!,
          organization_id: identity.organizationId ?? null,
          user_id: identity.userId ?? null,
          test,
          send_at: sendAt,
          created_at: new Date(),
          body: requestText,
          body_chars: requestText.length,
          run_started_at: null,
        });
        admission.stored();
      } catch (err) {
        // Not stored: its place is not held (a pending record without a request fails as lost).
        await admission.giveBack().catch(() => undefined);
        throw err;
      }
      logger.info({ email_id: emailId, send_at: sendAt.toISOString() }, 'email scheduled');
      return {
        email_id: emailId,
        scheduled: true,
        send_at: sendAt.toISOString(),
        message: SCHEDULED_MESSAGE,
        ...(principal.test === true ? { test: true as const } : {}),
      };
    },

    async sendDue(emailId) {
      const fate = await fateOf(emailId);
      if (fate) return fate;
      const doc = await store.find(emailId);
      if (!doc) return lost(emailId);
      const principal = authenticatedAs({
        companyId: doc.company_id,
        organizationId: doc.organization_id ?? undefined,
        userId: doc.user_id ?? undefined,
        ...(doc.test ? { test: true } : {}),
      });
      try {
        const sent = await deps.send(JSON.parse(doc.body), principal, {
          idempotencyKey: scheduledSendKey(emailId),
        });
        return { emailId, status: 'sent', providerId: sent.provider_id };
      } catch (err) {
        if (!isMailroomError(err) || err.retryable) throw err;
        // Final: refused at send time (an attachment URL, a suppressed
        // recipient, a domain blocked since), cancelled meanwhile, or
        // rejected by the provider. The record says so; the run completes.
        if (err.kind !== 'cancelled') await records.markFailed(emailId, err.message, err.kind);
        return (await fateOf(emailId)) ?? { emailId, status: 'failed', error: err.message };
      }
    },

    async cancel(emailId, principal) {
      await cancelScheduled({ records, keys, store, logger }, emailId, principal);
    },

    async cancelDue(emailId) {
      return cancelScheduled({ records, keys, store, logger }, emailId, undefined);
    },

    async forget(emailId) {
      await store.remove(emailId);
    },

    list: (principal, after, limit) => listScheduled({ records, store }, principal, after, limit),

    unstarted: (before, limit) => store.unstarted(before, limit),

    markStarted: (emailId) => store.markStarted(emailId),
  };

  /**
   * A pending record without its stored request (the process died between
   * writing the two): nothing to send. Failed, so it does not wait for the sweeper.
   */
  async function lost(emailId: string): Promise<ScheduledSendResult> {
    await records.markFailed(emailId, SCHEDULED_REQUEST_LOST, 'validation');
    return (await fateOf(emailId)) ?? { emailId, status: 'failed', error: SCHEDULED_REQUEST_LOST };
  }
}
