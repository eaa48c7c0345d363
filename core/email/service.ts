import type { Db } from 'mongodb';
import { getTemplate } from '../../templates/index.ts';
import type { Config } from '../config.ts';
import { MailroomError } from '../errors.ts';
import { isUuid } from '../identity.ts';
import type { Logger } from '../logger.ts';
import { isPlainObject } from '../validation.ts';
import { createAttachmentFetcher, resolveAttachments, type AttachmentFetcher } from './attachments.ts';
import { authorizeSend, authorizeStatus, canSee } from './auth.ts';
import { sendBulk } from './bulk.ts';
import type { EmailService } from './contract.ts';
import { idempotencyKeys } from './idempotency-keys.ts';
import { ensureEmailIndexes } from './indexes.ts';
import { EMAIL_NOT_FOUND } from './messages.ts';
import { createSendGridProvider, defaultSender, type MailProvider } from './provider.ts';
import { recordStore } from './record-store.ts';
import { createSendPipeline } from './send-pipeline.ts';
import { toStatus } from './status-view.ts';
import { OpenBuffer, type FlushReport } from './open-buffer.ts';
import { recordEvent } from './tracking.ts';
import { looksLikeViewKey } from './view-key.ts';
import { validateSendBody } from './validate.ts';
import { createWebhookHandler } from './webhook.ts';

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
}

export function createEmailService(deps: EmailServiceDeps): EmailService {
  const { db, config, logger } = deps;
  const records = recordStore(db);
  const keys = idempotencyKeys(db);
  const fetcher =
    deps.fetchAttachment ??
    createAttachmentFetcher({
      timeoutMs: config.attachmentFetchTimeoutMs,
      allowAddresses: deps.attachmentAllowedAddresses ?? [],
    });
  const deliver = createSendPipeline({
    records,
    keys,
    provider: deps.provider ?? createSendGridProvider(config),
    sender: defaultSender(config),
    publicBaseUrl: config.publicBaseUrl,
    logger,
  });
  const opens = new OpenBuffer({
    write: (batch) => records.applyOpens(batch),
    logger,
    ...(deps.onOpensFlushed ? { onFlush: deps.onOpensFlushed } : {}),
  });
  const handleWebhook = createWebhookHandler({
    records,
    publicKey: config.sendgrid.webhookPublicKey,
    logger,
  });

  const send: EmailService['send'] = async (body, caller, options = {}) => {
    // Authorise first: unauthenticated callers get 401, not details about their payload.
    const templateId =
      isPlainObject(body) && typeof body['template_id'] === 'string' ? body['template_id'] : '';
    const identity = authorizeSend(caller, getTemplate(templateId)?.requiresAuth ?? true);
    const input = validateSendBody(body, config.blockedEmailDomains);
    const attachments = await resolveAttachments(input.attachments, fetcher);
    return deliver(input, attachments, identity, options.idempotencyKey);
  };

  return {
    ensureIndexes() {
      return ensureEmailIndexes(db);
    },

    send,

    sendBulk(body, caller) {
      return sendBulk({ send: (item, c) => send(item, c), logger }, body, caller);
    },

    async getStatus(emailId, caller) {
      const identity = authorizeStatus(caller);
      const notFound = new MailroomError('not_found', EMAIL_NOT_FOUND);
      if (!isUuid(emailId)) throw notFound;
      const record = await records.findById(emailId.toLowerCase());
      if (!record || !canSee(identity, record)) throw notFound;
      return toStatus(record);
    },

    async recordOpen(viewKey) {
      // A key of the wrong shape is never buffered; the rest is checked when the batch is written.
      if (looksLikeViewKey(viewKey)) opens.add(viewKey);
    },

    flushOpens() {
      return opens.flush();
    },

    openStats() {
      return opens.stats();
    },

    close() {
      return opens.close();
    },

    recordEvent(body) {
      return recordEvent(records, body);
    },

    handleSendGridWebhook(rawBody, headers) {
      return handleWebhook(rawBody, headers);
    },

    async markFailed(idempotencyKey, reason) {
      const emailId = await keys.findEmailId(idempotencyKey);
      if (!emailId) return;
      const record = await records.findById(emailId);
      await records.markFailed(emailId, reason, record?.error_kind ?? 'transient');
    },
  };
}
