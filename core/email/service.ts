import type { Db } from 'mongodb';
import { getTemplate } from '../../templates/index.ts';
import { precompileTemplates } from '../../templates/engine.ts';
import type { Config } from '../config.ts';
import { MailroomError } from '../errors.ts';
import { checkIdentity, isUuid, type Principal } from '../identity.ts';
import type { Logger } from '../logger.ts';
import { clicksFollowed, opensDropped, opensRecorded } from '../metrics.ts';
import { isPlainObject } from '../validation.ts';
import { createAttachmentFetcher, resolveAttachments, type AttachmentFetcher } from './send/index.ts';
import { authorizeSend, authorizeStatus, canSee } from './auth.ts';
import { sendBulk } from './send/index.ts';
import { createClickTracking } from './tracking/index.ts';
import { createHtmlRenderPool } from './tracking/index.ts';
import type { EmailService, SendOptions } from './contract.ts';
import { createStepSendKeys } from './idempotency/index.ts';
import { ensureEmailIndexes } from './records/index.ts';
import {
  CLICK_LINK_EXPIRED,
  EMAIL_NOT_FOUND,
  INVALID_CLICK_LINK,
  OUTCOME_UNKNOWN,
} from './email-messages.ts';
import { defaultSender, type MailProvider } from './send/index.ts';
import { createProviders } from './send/index.ts';
import { createRecordStore } from './records/index.ts';
import { createSendPipeline } from './send/index.ts';
import { sweepStuckPending } from './records/index.ts';
import { failedBeforeHandOver, statusOf } from './records/index.ts';
import { toStatus } from './records/index.ts';
import { createOpenBuffer, type FlushReport } from './tracking/index.ts';
import { createTrackLimiter, recordEvent } from './tracking/index.ts';
import { looksLikeViewKey } from './tracking/index.ts';
import { asksToSchedule, callOffStepSend, createScheduledSends } from './send/index.ts';
import {
  BULK_RATE_WAIT_MS,
  captureToDevInbox,
  createDailyQuotas,
  createSenderPolicy,
  createTestProvider,
} from './send/index.ts';
import { validateSendBody } from './validate.ts';
import { createWebhookHandler } from './webhook.ts';
import { createSuppressionStore } from './suppressions/index.ts';
import { createSuppressionsApi } from './suppressions/index.ts';
import { createRequestIdempotency } from './idempotency/index.ts';
import { narrowSignupSend, withConfiguredVariables, type SignupPolicy } from './signup/index.ts';
import { ensureRateLimitIndexes, createSignupLimits } from './signup/index.ts';
import type { LifecycleSink } from './records/index.ts';

/**
 * The email core, composed: validate → authorise → fetch attachments → the
 * send pipeline (send-pipeline.ts). One instance serves the HTTP gateway and
 * the workflow activities.
 */

export interface EmailServiceDeps {
  db: Db;
  config: Config;
  logger: Logger;
  /** Replaces the SSRF-safe URL fetcher for attachments given by `path` (tests). */
  fetchAttachment?: AttachmentFetcher;
  /**
   * Addresses the real fetcher may reach although private/loopback. Tests only
   * (a local server is on 127.0.0.x); deliberately not a configuration variable.
   */
  attachmentAllowedAddresses?: string[];
  /** Replaces SendGrid (tests of the core without HTTP); default from config.sendgrid. */
  provider?: MailProvider;
  /** After every batch of pixel opens is written: the hook for metrics (recorded, failed, dropped). */
  onOpensFlushed?: (report: FlushReport) => void;
  /**
   * Start the threads that render callers' HTML now (the gateway), rather than
   * on the first custom send (a thread takes a noticeable fraction of a second to start).
   */
  warmRenderThreads?: boolean;
  /** Told of every record change before and after it is written: outbound webhooks (core/webhooks/). */
  lifecycle?: LifecycleSink;
}

/** The template a send body names; undefined for none or an unknown one (which needs authentication). */
function templateNamedIn(body: unknown) {
  return isPlainObject(body) && typeof body['template_id'] === 'string'
    ? getTemplate(body['template_id'])
    : undefined;
}

export function createEmailService(deps: EmailServiceDeps): EmailService {
  const { db, config, logger } = deps;
  precompileTemplates();
  const records = createRecordStore(db, deps.lifecycle);
  const keys = createStepSendKeys(db);
  const suppressions = createSuppressionStore(db);
  const fetcher =
    deps.fetchAttachment ??
    createAttachmentFetcher({
      timeoutMs: config.attachmentFetchTimeoutMs,
      allowAddresses: deps.attachmentAllowedAddresses ?? [],
    });
  const clicks = createClickTracking({
    secret: config.secret,
    publicBaseUrl: config.publicBaseUrl,
    lifetimeMs: config.clickLinkLifetimeMs,
  });
  const customHtml = createHtmlRenderPool({ warm: deps.warmRenderThreads ?? false });
  const trackLimiter = createTrackLimiter();
  const quotas = createDailyQuotas(db);
  const senders = createSenderPolicy(db, {
    defaultFrom: defaultSender(config).email,
    allowed: config.allowedSenders,
    openWhenUnlisted: config.authMode === 'trusted-headers',
  });
  const deliver = createSendPipeline({
    records,
    keys,
    suppressions,
    provider: deps.provider ?? createProviders(config, logger, db),
    // Under `npm run dev`, test messages show in the dev inbox (marked `test`).
    testProvider: createTestProvider(
      config.devInboxDir ? captureToDevInbox(config.devInboxDir, logger) : undefined,
    ),
    quotas,
    sender: defaultSender(config),
    replyTo: config.emailReplyTo,
    publicBaseUrl: config.publicBaseUrl,
    clicks,
    customHtml,
    logger,
  });
  const opens = createOpenBuffer({
    write: (batch) => records.applyOpens(batch),
    logger,
    onFlush: (report) => {
      // Dropped: shed while the buffer was full, or lost with a failed write that could not be retried.
      opensRecorded.inc(report.recorded);
      opensDropped.inc(report.droppedSinceLastFlush + report.failed);
      deps.onOpensFlushed?.(report);
    },
  });
  // Bound once: the click path counts every hit, and labels() hashes its values per call.
  const clickBuffered = clicksFollowed.labels('true');
  const clickDropped = clicksFollowed.labels('false');
  const handleWebhook = createWebhookHandler({
    records,
    suppressions,
    publicKey: config.sendgrid.webhookPublicKey,
    allowUnsigned: config.sendgrid.webhookAllowUnsigned,
    logger,
  });

  const limits = createSignupLimits(db, config.signup, logger);
  const signup: SignupPolicy = {
    // Unset allows no origin with API keys (anyone may call the anonymous
    // path); behind a trusted proxy, which answers for its callers, any origin.
    linkOrigins:
      config.signup.linkOrigins.length === 0 && config.authMode === 'trusted-headers'
        ? 'any'
        : config.signup.linkOrigins,
    configured: { supportEmail: config.supportEmail },
  };
  const requests = createRequestIdempotency(db, records, logger);

  /** A send; a bulk's items may wait longer for a provider's rate (`rateWaitMs`). */
  const send = async (
    body: unknown,
    principal: Parameters<EmailService['send']>[1],
    options: SendOptions & { rateWaitMs?: number } = {},
  ) => {
    // Authorise first: unauthenticated callers get 401, not details about their payload.
    const template = templateNamedIn(body);
    const identity = authorizeSend(principal, template?.requiresAuth ?? true);
    // Without authentication only a signup template gets here (authorizeSend), narrowed.
    const signupTemplate = principal.authenticated ? undefined : template;
    let input = validateSendBody(
      signupTemplate ? withConfiguredVariables(body, signupTemplate, signup.configured) : body,
      config.blockedEmailDomains,
    );
    if (signupTemplate) {
      input = narrowSignupSend(input, signupTemplate, signup);
      await limits.consume(input.to[0]!.email, principal.clientIp);
    }
    if (input.from) await senders.check(identity.companyId, input.from.email);
    const attachments = await resolveAttachments(input.attachments, fetcher);
    const test = principal.test === true;
    return deliver(input, attachments, identity, options.idempotencyKey, test, options.rateWaitMs);
  };

  const scheduled = createScheduledSends({
    db,
    records,
    keys,
    customHtml,
    blockedDomains: config.blockedEmailDomains,
    senders,
    pendingLimits: config.scheduledPending,
    send: (body, principal, options) => send(body, principal, options),
    logger,
  });

  return {
    async ensureIndexes() {
      await ensureEmailIndexes(db);
      await ensureRateLimitIndexes(db, logger);
    },

    send,

    once(principal, { key, kind, body, run }) {
      const companyId = principal.authenticated ? checkIdentity(principal.caller)?.companyId : undefined;
      // An organization-bound key's keys are its organization's: another
      // organization's answers (and their email ids) are not replayed to it.
      const organizationId = principal.boundOrganizationId;
      // A test key's Idempotency-Keys never replay a live answer, nor the reverse.
      const test = principal.test === true;
      return requests.once({ companyId, organizationId, test, key, kind, body, run, emailIdsOf: emailIdsOf });
    },

    sendBulk(body, principal) {
      // An item with `send_at` is scheduled (send/scheduled-sends.ts), the others sent now,
      // each waiting its turn at the provider's rate: a bulk is paced to it.
      const paced = { rateWaitMs: BULK_RATE_WAIT_MS };
      const one = (item: unknown, p: Principal) =>
        asksToSchedule(item) ? scheduled.schedule(item, p) : send(item, p, paced);
      const requiresAuth = (item: unknown) => templateNamedIn(item)?.requiresAuth ?? true;
      return sendBulk({ send: one, requiresAuth, logger }, body, principal);
    },

    async getStatus(emailId, principal) {
      const identity = authorizeStatus(principal);
      const notFound = new MailroomError('not_found', EMAIL_NOT_FOUND);
      if (!isUuid(emailId)) throw notFound;
      const record = await records.findById(emailId.toLowerCase());
      if (!record || !canSee(identity, record, principal.boundOrganizationId)) throw notFound;
      // Test and live data are apart: a test key sees test sends only, a live key live ones.
      if ((record.test === true) !== (principal.test === true)) throw notFound;
      return toStatus(record);
    },

    async recordOpen(viewKey) {
      // A key of the wrong shape is never buffered; the rest is checked when the batch is written.
      if (looksLikeViewKey(viewKey)) opens.add(viewKey);
    },

    async followClick(token, { count } = { count: true }) {
      const target = clicks.verify(token);
      if (!target) throw new MailroomError('validation', INVALID_CLICK_LINK);
      const now = Date.now();
      if (target.expiresAt <= now) throw new MailroomError('validation', CLICK_LINK_EXPIRED);
      // Buffered like a pixel open; the redirect never waits on the database.
      if (count) (opens.addClick(target.emailId, now) ? clickBuffered : clickDropped).inc();
      return target.url;
    },

    flushOpens() {
      return opens.flush();
    },

    openStats() {
      return opens.stats();
    },

    async close() {
      limits.stop();
      requests.stop();
      await Promise.all([opens.close(), customHtml.close()]);
    },

    recordEvent(body) {
      return recordEvent(records, body, trackLimiter);
    },

    handleSendGridWebhook(rawBody, headers) {
      return handleWebhook(rawBody, headers);
    },

    async markFailed(idempotencyKey, reason) {
      const emailId = await keys.findEmailId(idempotencyKey);
      if (!emailId) return;
      const record = await records.findById(emailId);
      // A send whose last attempt may have reached the provider stays explained as such.
      if (record?.attempt_id)
        await records.markFailed(
          emailId,
          reason.startsWith('email outcome unknown') ? OUTCOME_UNKNOWN : `${OUTCOME_UNKNOWN} (${reason})`,
          'outcome_unknown',
        );
      else await records.markFailed(emailId, reason, record?.error_kind ?? 'transient');
    },

    callOff(idempotencyKey) {
      return callOffStepSend({ records, keys, logger }, idempotencyKey);
    },

    async failedWithoutSending(idempotencyKey) {
      const emailId = await keys.findEmailId(idempotencyKey);
      const record = emailId === undefined ? null : await records.findById(emailId);
      return record !== null && failedBeforeHandOver(record);
    },

    async outcomeOf(emailId) {
      if (!isUuid(emailId)) return null;
      const record = await records.findById(emailId.toLowerCase());
      return (
        record && {
          template_id: record.template_id,
          status: statusOf(record),
          error: record.error,
          test: record.test === true,
        }
      );
    },

    quotaOf(companyId) {
      return quotas.status(companyId);
    },

    suppressions: createSuppressionsApi(suppressions),

    scheduled,

    async sweepStuckPending(boundMs) {
      const swept = await sweepStuckPending(records, logger, boundMs);
      // A swept scheduled email (its run was terminated) is over: its stored request goes, and
      // with it its place in the company's bound. For any other email this finds nothing.
      for (const { email_id } of swept)
        await scheduled.forget(email_id).catch((err: unknown) => {
          logger.warn({ err, email_id }, "dropping a swept scheduled email's stored request failed");
        });
      return swept;
    },
  };
}

/** The email records a send's or a bulk's answer names. */
function emailIdsOf(result: unknown): string[] {
  if (!isPlainObject(result)) return [];
  if (typeof result['email_id'] === 'string') return [result['email_id']];
  const items = Array.isArray(result['results']) ? (result['results'] as unknown[]) : [];
  return items.flatMap((item) =>
    isPlainObject(item) && typeof item['email_id'] === 'string' ? [item['email_id']] : [],
  );
}
