/**
 * The email core's public surface: what the HTTP routes (api/routes/email) and
 * the workflow activities (activities/) call. One implementation
 * (core/email/service.ts, `createEmailService`) serves both, so a send from a
 * workflow is validated, recorded, tracked and delivered exactly like one over
 * HTTP. Every method throws MailroomError (core/errors.ts) on failure.
 */
import type { Principal } from '../identity.ts';
import type { OpenBufferStats } from './tracking/index.ts';
import type { BulkResult, EmailStatus, SendResult } from './email-schema.ts';
import type { SweptRecord } from './records/index.ts';
import type { SuppressionsApi } from './suppressions/index.ts';
import type { RequestKind } from './idempotency/index.ts';
import type { CallOffOutcome, ScheduledSendsApi } from './send/index.ts';
import type { QuotaStatus } from './send/index.ts';

export type { BulkResult, EmailStatus, SendResult } from './email-schema.ts';

export interface SendOptions {
  /**
   * Exactly-once key (workflow id + activity id). Stored uniquely on the record:
   * a second call with the same key returns the first call's result and sends nothing.
   */
  idempotencyKey?: string;
}

/** What the dev inbox shows beside a captured message: its record's template, status and error. */
export interface RecordOutcome {
  template_id: string;
  status: EmailStatus['status'];
  error: string | null;
  /** Sent with a test-mode key: never delivered (the dev inbox marks it). */
  test: boolean;
}

export interface EmailService {
  /** Creates the collections' indexes; idempotent, called at start. */
  ensureIndexes(): Promise<void>;
  /** Validates `body` (the single-send body), records, renders and delivers one email. */
  send(body: unknown, principal: Principal, options?: SendOptions): Promise<SendResult>;
  /**
   * Runs a send or a bulk once per `Idempotency-Key` of the caller's company
   * (request-idempotency.ts): a later request with the key and the same body gets the
   * first answer (`replayed`), another body → conflict (409).
   */
  once<T>(
    principal: Principal,
    request: { key: string; kind: RequestKind; body: unknown; run: () => Promise<T> },
  ): Promise<{ result: T; replayed: boolean }>;
  /** Validates and sends each item on its own, in batches of 50 with `batchDelay` between batches. */
  sendBulk(body: unknown, principal: Principal): Promise<BulkResult>;
  /** One record, visible only to the company (or, without one, the user) that sent it; else not_found. */
  getStatus(emailId: string, principal: Principal): Promise<EmailStatus>;
  /**
   * The tracking pixel's side effect. Buffered (open-buffer.ts): resolves at
   * once, the open is written with the next batch (500 ms after the
   * first hit while the database keeps up). Unknown or
   * missing key: nothing is recorded; never throws.
   */
  recordOpen(viewKey: string | undefined): Promise<void>;
  /**
   * A tracked link's click (`GET /api/email/click/{token}`): the original URL
   * to redirect to, the click (and its open) buffered like a pixel open. A
   * token Mailroom did not sign, or whose lifetime is over → validation error
   * (never a redirect). A valid token whose record is gone still redirects;
   * nothing is recorded then (except a token of the first format, which
   * carries no expiry: its record's age decides, so without one it is expired).
   * `count: false` (a HEAD: link checkers and mail scanners ask before any
   * reader clicks) answers the same and records nothing.
   */
  followClick(token: string, options?: { count: boolean }): Promise<string>;
  /** Writes the buffered pixel opens and clicks now; resolves once they are in the database. */
  flushOpens(): Promise<void>;
  /** Counters of the pixel's open buffer (accepted, dropped, recorded, failed, flushes, pending). */
  openStats(): OpenBufferStats;
  /** Shutdown: flushes the buffered opens and stops the service's timers (open flushes, rate-limit sweep). */
  close(): Promise<void>;
  /** POST /api/email/track body `{ view_key, event_type }`. Unknown key → not_found. */
  recordEvent(body: unknown): Promise<void>;
  /** SendGrid Event Webhook: verifies the signature when a public key is configured, applies each event. */
  handleSendGridWebhook(
    rawBody: string,
    headers: Record<string, string | string[] | undefined>,
  ): Promise<{ applied: number }>;
  /** A workflow gave up on the send keyed by `idempotencyKey`: the pending record becomes `failed`. */
  markFailed(idempotencyKey: string, reason: string): Promise<void>;
  /**
   * A workflow run was cancelled: the send keyed by `idempotencyKey`, still
   * pending and not at the provider, becomes `failed` (send/step-call-off.ts).
   */
  callOff(idempotencyKey: string): Promise<CallOffOutcome>;
  /**
   * True when the send keyed by `idempotencyKey` failed and the provider
   * certainly never took it: a new attempt under a NEW key cannot duplicate
   * it. False when there is no such send, it went out, or it may have.
   */
  failedWithoutSending(idempotencyKey: string): Promise<boolean>;
  /**
   * The outcome of record `emailId` for the dev inbox, or null. No caller
   * check: the dev pages are mounted only with DEV_INBOX_DIR (npm run dev),
   * never in production, and show the local mail sink's own messages.
   */
  outcomeOf(emailId: string): Promise<RecordOutcome | null>;
  /** The company's daily sending limit and today's use (quotas/daily-quota.ts). */
  quotaOf(companyId: string): Promise<QuotaStatus>;
  /** A company's suppression list (the caller's company, established by the gateway). */
  suppressions: SuppressionsApi;
  /** Sends with `send_at`: scheduled, sent by a workflow run, cancellable (send/scheduled-sends.ts). */
  scheduled: ScheduledSendsApi;
  /** Fails the records pending for longer than `boundMs` (core/email/sweeper.ts). */
  sweepStuckPending(boundMs?: number): Promise<SweptRecord[]>;
}
