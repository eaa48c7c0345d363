import { randomUUID } from 'node:crypto';
import { renderEmail } from '../../../templates/engine.ts';
import { CUSTOM_TEMPLATE_ID } from '../../../templates/index.ts';
import { MailroomError, isDuplicateKeyError, isMailroomError } from '../../errors.ts';
import { takeTurn } from '../../event-loop-turns.ts';
import type { Identity } from '../../identity.ts';
import type { Logger } from '../../logger.ts';
import { emailsFailed, emailsSent, providerCallDuration } from '../../metrics.ts';
import type { StepSendKeys } from '../idempotency/step-send-keys.ts';
import { NOT_CONFIGURED, allRecipientsSuppressed } from '../email-messages.ts';
import type { MailProvider, OutgoingAttachment } from './provider.ts';
import { testOutcomeFor } from './providers/test-mode.ts';
import { failProviderCall } from './provider-failure.ts';
import { HandOverFailed } from './hand-over.ts';
import type { DailyQuotas } from './quotas/daily-quota.ts';
import type { Address } from '../addresses.ts';
import type { ClickTracking } from '../tracking/click-tracking.ts';
import type { HtmlRenderPool, RenderedHtml } from '../tracking/html-render-pool.ts';
import { STATUS_RANK, type EmailRecord } from '../records/record.ts';
import type { AttemptMessage, RecordStore } from '../records/record-store.ts';
import type { SendResult, SkippedRecipient } from '../email-schema.ts';
import { listOwner, withoutSuppressed, type SuppressionStore } from '../suppressions/suppression-store.ts';
import type { NormalizedSend } from '../validate.ts';
import { answer, messageFields, recipientFields } from '../records/new-record.ts';
import { createSendClaim, type ClaimedRecord } from './send-claim.ts';

/**
 * The send pipeline, after validation and authorisation: reserve the record
 * (for a keyed send) → render, while the suppression list is read → leave
 * out suppressed recipients → count it against the company's daily limit
 * (quotas/daily-quota.ts; 429 over it) → wait for the provider's rate, if it
 * has one (quotas/rate-gate.ts) → record (pending, with this attempt's mark;
 * hand-over.ts says why after the wait) → deliver → record (sent | failed;
 * provider-failure.ts).
 *
 * Suppressed recipients (the company's suppression list) are left out and
 * listed in the record and the answer (`suppressed`); when no `to` recipient
 * is left, nothing is sent and the record is `failed` with the reason.
 *
 * No send is ever lost without a record: once the input is valid, a record
 * exists before the provider is called, and every outcome, including a
 * missing API key, is written to it.
 *
 * A keyed send is never repeated blindly: send-claim.ts.
 */

export interface SendPipelineDeps {
  records: RecordStore;
  keys: StepSendKeys;
  suppressions: SuppressionStore;
  /** Undefined when no provider key is configured. */
  provider: MailProvider | undefined;
  /** Where test-mode sends go (test-mode.ts): never a real provider. */
  testProvider: MailProvider;
  /** Companies' daily limits: live sends count, test sends never. */
  quotas: DailyQuotas;
  sender: Address;
  /** EMAIL_REPLY_TO: the Reply-To of a send that names none. */
  replyTo: Address | undefined;
  publicBaseUrl: string;
  /** Rewrites the HTML's links to signed click redirects (unless the send says `track_clicks: false`). */
  clicks: ClickTracking;
  /** Renders the caller's HTML (the custom template) off the event loop, within a time budget. */
  customHtml: HtmlRenderPool;
  logger: Logger;
}

export type Deliver = (
  input: NormalizedSend,
  attachments: OutgoingAttachment[],
  identity: Identity,
  key: string | undefined,
  /** A test-mode send (test-mode.ts): recorded and tracked, never handed to a provider. */
  test?: boolean,
  /** How long it may wait for a provider's rate (rate-gate.ts); its default otherwise. */
  rateWaitMs?: number,
) => Promise<SendResult>;

export function createSendPipeline(deps: SendPipelineDeps): Deliver {
  const { records, keys, logger } = deps;
  const { claimRecord } = createSendClaim({ records, keys, logger });

  const pixelUrl = (viewKey: string) =>
    `${deps.publicBaseUrl}/api/email/track?view_key=${encodeURIComponent(viewKey)}`;

  async function deliver(
    requested: NormalizedSend,
    attachments: OutgoingAttachment[],
    identity: Identity,
    key: string | undefined,
    test = false,
    rateWaitMs?: number,
  ): Promise<SendResult> {
    const claimed = await claimRecord(requested, identity, key, test);
    if ('done' in claimed) return claimed.done;
    // The suppression check (a database read) runs while the message renders:
    // the rendering does not depend on the recipients.
    const checking = leaveOutSuppressed(requested, identity, test);
    checking.catch(() => undefined); // awaited in prepareMessage; never an unhandled rejection
    const attemptId = randomUUID();
    const provider = test ? deps.testProvider : deps.provider;
    let prepared: Awaited<ReturnType<typeof prepareMessage>>;
    // The company's daily limit counts a send once: when its record is made,
    // for a scheduled send (its record made when scheduled) at its first
    // attempt, and for a failed send made pending again by a reset run (its
    // count given back when it failed) at that attempt.
    let giveBack: (() => Promise<void>) | undefined;
    /** The record as this attempt inserted it (a new record only). */
    let inserted: EmailRecord | undefined;
    /** The attempt's mark on the record (with the record itself, when new): written once. */
    let marked: Promise<void> | undefined;
    const mark = () =>
      (marked ??= (async () => {
        const { record, message } = prepared;
        const at = new Date();
        if (claimed.isNew) {
          inserted = { ...record, attempt_id: attemptId, attempt_started_at: at };
          await records.insert(inserted);
        } else await records.markAttempt(record.email_id, attemptId, at, message);
      })());
    /** Nothing reached a provider: undo this attempt's hold, or answer as the attempt that won. */
    const abandon = async (err: unknown): Promise<SendResult> => {
      await giveBack?.().catch(() => undefined);
      // An attempt with the same key inserted first (its lease had expired and
      // we took it over): answer as it will. Keep our lease: releasing it would
      // let this very retry send while that attempt may still be sending.
      if (key !== undefined && isDuplicateKeyError(err))
        return deliver(requested, attachments, identity, key, test, rateWaitMs);
      // Nothing reached the provider: the retry need not wait for the lease to expire.
      if (key !== undefined) await keys.releaseAttempt(key).catch(() => undefined);
      throw err;
    };
    try {
      // Rendering costs in proportion to the message: sends resumed together
      // (by one group-committed write, or one bulk) take turns on the event loop.
      await takeTurn();
      prepared = await prepareMessage(requested, claimed, checking);
      const counts =
        claimed.isNew ||
        claimed.reopened === true ||
        (claimed.record.send_at !== undefined && !claimed.record.attempt_id);
      const countsAgainst = counts && !test ? identity.companyId : undefined;
      if (countsAgainst !== undefined) giveBack = await deps.quotas.take(countsAgainst);
      // Marked before the provider hears of it (see the top of this file); a
      // provider with a rate marks after its wait, right before the hand-over.
      if (!provider?.waitsForRate) await mark();
    } catch (err) {
      return abandon(err);
    }
    const { rendered, input, skipped, record } = prepared;

    if (!provider) {
      // (markFailed keeps the attempt mark; harmless: the record is no longer pending.)
      emailsFailed.inc({ template: input.templateId, kind: 'not_configured' });
      await giveBack?.().catch(() => undefined);
      await records.markFailed(record.email_id, NOT_CONFIGURED, 'not_configured');
      if (key !== undefined) await keys.releaseAttempt(key).catch(() => undefined);
      throw new MailroomError('not_configured', NOT_CONFIGURED);
    }

    let providerId: string;
    let sentBy: string;
    // The "sent" announcement is written while the provider works, not after it
    // answered: once the record is marked (so after a rate's wait).
    let sentAnnounced: ReturnType<typeof records.announceSent> | undefined;
    const announce = () => {
      sentAnnounced = records.announceSent(record.email_id);
      sentAnnounced.catch(() => undefined); // markSent announces again if this failed
    };
    if (marked) announce();
    const beforeHandOver = async () => {
      await mark();
      if (!sentAnnounced) announce();
    };
    // Handing over serialises the message (as long as it is): turns again, ahead of the
    // renders of sends not marked yet (the mark-to-request time is the outcome-unknown window).
    await takeTurn('handover');
    const stopTimer = providerCallDuration.startTimer();
    try {
      const taken = await provider.send({
        emailId: record.email_id,
        from: input.from ?? deps.sender,
        to: input.to,
        cc: input.cc,
        bcc: input.bcc,
        replyTo: input.replyTo ?? deps.replyTo,
        subject: input.subject,
        html: rendered.html,
        text: rendered.text,
        attachments,
        categories: input.tags,
        ...(rateWaitMs === undefined ? {} : { rateWaitMs }),
        ...(provider.waitsForRate ? { beforeHandOver } : {}),
      });
      providerId = taken.providerId;
      sentBy = taken.provider ?? provider.name;
      stopTimer({ outcome: 'ok' });
    } catch (err) {
      // The record (or its mark) could not be written: nothing was handed over.
      if (err instanceof HandOverFailed) return abandon(err.reason);
      stopTimer({ outcome: isMailroomError(err) ? err.kind : 'transient' });
      // Refused before any hand-over (every provider at its rate): the failure
      // is still recorded, on the record inserted now if it was new.
      if (!marked)
        try {
          await mark();
        } catch (markErr) {
          return abandon(markErr);
        }
      // Refused: it was not sent. Unknown: left for the outbox's recovery to read the record.
      if (!isMailroomError(err) || err.kind !== 'outcome_unknown')
        sentAnnounced?.then(
          (a) => a.settled(false),
          () => undefined,
        );
      const send = { emailId: record.email_id, templateId: input.templateId, key };
      return failProviderCall({ records, keys, logger }, err, send, giveBack);
    }
    emailsSent.inc({ template: input.templateId });

    try {
      // Only a keyed (workflow) send's record has other writers: a workflow giving up on it.
      await records.markSent(record.email_id, providerId, {
        othersMayHaveFailedIt: key !== undefined,
        provider: sentBy,
        announced: sentAnnounced,
        inserted,
      });
    } catch (err) {
      // The provider has the message: answering failure would invite a second
      // send. Keep trying to record it in the background (the database may be
      // back in seconds); webhook events also move it forward; failing all
      // that, the sweeper explains it.
      logger.error(
        { err, email_id: record.email_id, provider_id: providerId },
        'email sent but record not updated; retrying in the background',
      );
      recordSentLater(record.email_id, providerId, sentBy);
    }
    if (test) await playTestEvents(record, input.to[0]?.email ?? '');
    return answer(record.email_id, providerId, skipped, record.test === true);
  }

  /** What a real provider's events would do next, for a test send (test-mode.ts): on test data only. */
  async function playTestEvents(record: EmailRecord, firstTo: string): Promise<void> {
    const { events, suppress } = testOutcomeFor(firstTo);
    for (const event of events) await records.applyEvent({ email_id: record.email_id }, event);
    if (suppress && record.company_id)
      await deps.suppressions.add({
        company_id: listOwner(record.company_id, true),
        email: firstTo,
        reason: suppress,
        source: 'webhook',
        detail: 'test mode',
        email_id: record.email_id,
      });
  }

  /**
   * Renders the message (links made trackable, the pixel unless opted out)
   * and narrows the recipients to those not suppressed; no `to` left → the
   * send is refused. Before anything is inserted: a rendering bug must not
   * leave a pending record behind.
   */
  async function prepareMessage(
    requested: NormalizedSend,
    claimed: ClaimedRecord,
    checking: ReturnType<typeof leaveOutSuppressed>,
  ) {
    const emailId = claimed.record.email_id;
    const rendered = await render(requested, claimed.record, emailId);
    // A built-in template's links were tracked as it rendered them; the caller's HTML is scanned.
    if (requested.trackClicks && requested.templateId === CUSTOM_TEMPLATE_ID)
      rendered.html = await deps.clicks.trackLinks(rendered.html, emailId, rendered.links);
    const { skipped, kept } = await checking;
    // Every `to` suppressed but some cc left: the message still goes to the
    // others, its cc becoming its to (a message needs one). Bcc recipients
    // are never promoted: a To header would show one of them to the rest.
    const input = kept.to.length === 0 && kept.cc.length > 0 ? { ...kept, to: kept.cc, cc: [] } : kept;
    if (input.to.length === 0) return refuseSuppressed(claimed, skipped, input);
    // The record lists whom the message went to, and whom it left out. A
    // record an earlier attempt made (a retry's, a reset run's) takes this
    // attempt's whole message: what the record says is what was sent.
    const left = skipped.length ? { suppressed: skipped } : undefined;
    const message: AttemptMessage | undefined = claimed.isNew
      ? left && { ...recipientFields(input), ...left }
      : { ...messageFields(input), ...left };
    return { rendered, input, skipped, message, record: { ...claimed.record, ...message } };
  }

  /**
   * The message's HTML and text. A template is rendered here (its markup is
   * ours, its variables escaped); the caller's own HTML in a render thread,
   * which also finds its links when clicks are tracked.
   */
  async function render(
    input: NormalizedSend,
    record: Pick<EmailRecord, 'view_key' | 'company_id'>,
    emailId: string,
  ): Promise<RenderedHtml> {
    const trackingPixelUrl = input.trackOpens ? pixelUrl(record.view_key) : undefined;
    if (input.templateId !== CUSTOM_TEMPLATE_ID)
      return renderEmail({
        templateId: input.templateId,
        data: input.templateData,
        subject: input.subject,
        trackingPixelUrl,
        trackLink: input.trackClicks ? (href) => deps.clicks.link(emailId, href) : undefined,
        replyable: repliesReachSomeone(input),
      });
    if (input.htmlBody === undefined) throw new Error('html_body is required for the custom template');
    // The render threads take turns by company: another's queue never holds this one back.
    return deps.customHtml.render(
      { htmlBody: input.htmlBody, subject: input.subject, trackingPixelUrl, findLinks: input.trackClicks },
      record.company_id ?? '',
    );
  }

  /**
   * Whether a reply to the message reaches someone: it has a Reply-To (its
   * own or EMAIL_REPLY_TO), or comes from a sender other than the default
   * one (a no-reply address unless configured otherwise).
   */
  function repliesReachSomeone(input: NormalizedSend): boolean {
    const replyAddress = input.replyTo ?? deps.replyTo ?? input.from;
    return replyAddress !== undefined && replyAddress.email.toLowerCase() !== deps.sender.email.toLowerCase();
  }

  /** The company's (or its test list's) suppressed recipients, left out of `input` (sends without a company have no list). */
  async function leaveOutSuppressed(input: NormalizedSend, identity: Identity, test: boolean) {
    const companyId = identity.companyId;
    if (companyId === undefined) return { kept: input, skipped: [] };
    const all = [...input.to, ...input.cc, ...input.bcc].map((a) => a.email);
    return withoutSuppressed(input, await deps.suppressions.check(listOwner(companyId, test), all));
  }

  /**
   * No `to` recipient left: the record says why it failed, the caller gets 400
   * (never retried). The caller's error path gives a keyed send's lease back.
   */
  async function refuseSuppressed(
    claimed: ClaimedRecord,
    skipped: SkippedRecipient[],
    kept: NormalizedSend,
  ): Promise<never> {
    const { record } = claimed;
    const reason = allRecipientsSuppressed(skipped, kept.cc.length + kept.bcc.length > 0);
    if (claimed.isNew)
      await records.insert({
        ...record,
        suppressed: skipped,
        status_rank: STATUS_RANK.failed,
        error: reason,
        error_kind: 'suppressed',
      });
    else await records.markFailed(record.email_id, reason, 'suppressed');
    emailsFailed.inc({ template: kept.templateId, kind: 'suppressed' });
    throw new MailroomError('suppressed', reason);
  }

  /** markSent again every MARK_SENT_RETRY_MS, up to MARK_SENT_RETRIES times; never keeps the process alive. */
  function recordSentLater(emailId: string, providerId: string, sentBy: string, attempt = 1): void {
    setTimeout(() => {
      records.markSent(emailId, providerId, { provider: sentBy }).then(
        () => logger.info({ email_id: emailId, attempt }, 'email record updated after a retry'),
        (err: unknown) => {
          if (attempt < MARK_SENT_RETRIES) recordSentLater(emailId, providerId, sentBy, attempt + 1);
          else logger.error({ err, email_id: emailId }, 'email sent but record still not updated');
        },
      );
    }, MARK_SENT_RETRY_MS).unref();
  }

  return deliver;
}

const MARK_SENT_RETRY_MS = 2_000;
const MARK_SENT_RETRIES = 60;
