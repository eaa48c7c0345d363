import type { DescribeProblem, Problem } from '../validation.ts';

/**
 * Every error message the email service answers with, in one place.
 *
 * The first block is the email interface's Errors table, word for word:
 * clients match on these strings. The second block covers conditions the
 * interface leaves open; they follow its style: lower case, a full stop, no
 * internals.
 */

// --- The interface's messages --------------------------------------------------
export const MISSING_REQUIRED_FIELDS = 'missing required fields';
export const INVALID_EMAIL_ADDRESS = 'invalid email address provided.';
export const DOMAIN_NOT_ALLOWED = 'emails to this domain are not allowed.';
export const TEMPLATE_NOT_FOUND = 'email template not found.';
export const SUBJECT_REQUIRED = 'email subject is required.';
export const RECIPIENT_REQUIRED = 'email recipient is required.';
export const NOT_CONFIGURED = 'email service not configured.';
export const TOO_MANY_RECIPIENTS = 'too many recipients. maximum is 50.';
export const ATTACHMENT_TOO_LARGE = 'attachment exceeds maximum size limit.';
export const TOO_MANY_ATTACHMENTS = 'too many attachments. maximum is 10.';

/** `missing required fields: template_id`: the interface's message, naming what is missing. */
export const missingRequiredFields = (names: readonly string[]): string =>
  `${MISSING_REQUIRED_FIELDS}: ${names.join(', ')}`;

// --- Conditions the interface leaves open --------------------------------------
export const EMAIL_NOT_FOUND = 'email not found.';
/** The caller's HTML took a render thread past its time budget (core/email/html-render-pool.ts). */
export const HTML_TOO_COMPLEX = 'html_body is too complex.';

export const attachmentControlCharacters = (index: number) =>
  `attachments[${index}] filename and contentType must not contain control characters.`;
export const attachmentInvisibleCharacters = (index: number) =>
  `attachments[${index}] filename must not contain invisible or bidirectional formatting characters.`;

// Unauthenticated sends of the signup templates (core/email/signup-guard.ts).
export const ONE_RECIPIENT_WITHOUT_AUTHENTICATION = 'unauthenticated sends take exactly one recipient in to.';
/** A `from` no list allows (core/email/send/senders/sender-policy.ts). HTTP 403. */
export const fromNotAllowed = (from: string): string =>
  `from address not allowed for this company: ${from}. use the default sender, or an address or domain the operator allowed (ALLOWED_SENDERS, npm run keys -- senders).`;
export const notWithoutAuthentication = (field: 'cc' | 'bcc' | 'attachments' | 'from' | 'reply_to') =>
  `${field} is not allowed without authentication.`;
export const linkOriginNotAllowed = (variable: string) =>
  `${variable} must point at an allowed origin (SIGNUP_LINK_ORIGINS) without authentication.`;
export const SIGNUP_LINKS_NOT_CONFIGURED =
  'unauthenticated signup sends are off: the gateway allows their links on no origin (SIGNUP_LINK_ORIGINS is not set).';
export const linkToRedirect = (variable: string) =>
  `${variable} must not point at a click redirect (/api/email/click/) without authentication.`;
export const notPlainText = (field: string, max: number) =>
  `${field} must be plain text without authentication: at most ${max} characters, no links, @ or line breaks.`;
export const WEBHOOK_NOT_CONFIGURED =
  'webhook not configured: set SENDGRID_WEBHOOK_PUBLIC_KEY (or SENDGRID_WEBHOOK_ALLOW_UNSIGNED=true in dev).';
export const WEBHOOK_TIMESTAMP_OUTSIDE_WINDOW = 'webhook timestamp outside the allowed window.';
export const TOO_MANY_SIGNUP_SENDS = 'too many emails. try again later.';
/** Every configured provider is at its sending rate (…_MAX_PER_SECOND) for longer than a send waits. */
export const SENDING_RATE_LIMITED = 'sending rate limit reached. try again later.';
/** The company's daily limit (`npm run keys -- quota`) is spent until UTC midnight. */
export const DAILY_LIMIT_REACHED = 'daily sending limit reached.';
export const TOO_MANY_EMAILS = 'too many emails. maximum is 100.';
export const SUBJECT_TOO_LONG = 'email subject exceeds maximum length of 200 characters.';
export const SUBJECT_LINE_BREAK = 'email subject must not contain line breaks.';
export const SUBJECT_CONTROL_CHARACTERS = 'email subject must not contain control characters.';
export const TAG_CONTROL_CHARACTERS = 'tags must not contain control characters.';
export const BODY_NOT_OBJECT = 'request body must be a JSON object.';
export const BULK_ITEM_NOT_OBJECT = 'each email must be a JSON object.';
export const INVALID_BASE64 = 'attachment content must be valid base64.';
export const ATTACHMENT_CONTENT_AND_PATH = 'attachment must have either content or path, not both.';
export const INVALID_WEBHOOK_SIGNATURE = 'invalid webhook signature.';
export const WEBHOOK_BODY_NOT_ARRAY = 'webhook body must be a JSON array of events.';
/** A click link whose token Mailroom did not sign (tampered, truncated, foreign or malformed). */
export const INVALID_CLICK_LINK = 'invalid click link.';
/** A click link Mailroom signed whose lifetime (CLICK_LINK_LIFETIME_DAYS) is over. */
export const CLICK_LINK_EXPIRED = 'click link expired.';
/** A keyed (workflow) send whose previous attempt is still talking to the provider. */
export const IN_PROGRESS = 'email send already in progress.';
export const SENT_MESSAGE = 'email sent successfully.';
/**
 * A send whose outcome is unknown (the provider may have accepted it) and that
 * is not resent, so the recipient never gets it twice: an operator decides.
 */
export const OUTCOME_UNKNOWN =
  'email outcome unknown: the provider may have accepted it; not resent to avoid a duplicate.';
/** A send whose outcome was unknown until an operator confirmed it never went out (`npm run emails -- not-sent`). */
export const CONFIRMED_NOT_SENT =
  'email not sent: an operator confirmed the provider never took it (its outcome was unknown).';
/** A keyed send whose last attempt's outcome is unknown, still waiting for the provider's events. */
export const OUTCOME_PENDING = "email outcome unknown: waiting for the provider's events before deciding.";
/** The sweeper's verdict on a record that stayed pending and never reached the provider. */
export const abandonedSend = (minutes: number): string =>
  `email send abandoned: still pending after ${minutes} minutes and never handed to the provider.`;

/** A send whose `to` recipients are all on the company's suppression list: nothing was sent. */
export const allRecipientsSuppressed = (
  skipped: ReadonlyArray<{ email: string; reason: string }>,
  othersLeft: boolean,
): string =>
  `${othersLeft ? 'all to recipients are' : 'all recipients are'} suppressed: ${skipped
    .map((s) => `${s.email} (${s.reason})`)
    .join(', ')}. nothing was sent.`;
export const SUPPRESSION_NOT_FOUND = 'suppression not found.';
/** GET /api/email/suppressions with both page names, naming different pages. */
export const CONFLICTING_PAGE_FIELDS = 'after and cursor name different pages; give one of them.';

// Idempotency-Key on send and bulk (core/email/request-idempotency.ts).
export const IDEMPOTENCY_KEY_NEEDS_AUTHENTICATION =
  'Idempotency-Key needs an authenticated caller with a company (X-Company-Id).';
export const IDEMPOTENCY_KEY_BODY_MISMATCH =
  'Idempotency-Key was already used with a different request body; use a new key for a new request.';
export const IDEMPOTENCY_KEY_IN_PROGRESS =
  'a request with this Idempotency-Key is still in progress; retry later to get its answer.';
export const IDEMPOTENCY_KEY_UNFINISHED =
  'a request with this Idempotency-Key stopped before it answered; its outcome is unknown and it is not repeated. check the email status, or use a new key.';

export const unknownField = (path: string): string => `unknown field: ${path}.`;
export const invalidField = (path: string, problem: string): string => `invalid field ${path}: ${problem}.`;
export const attachmentFetchFailed = (reason: string): string => `attachment could not be fetched: ${reason}`;
export const invalidEventType = (allowed: readonly string[]): string =>
  `invalid event_type. expected one of: ${allowed.join(', ')}.`;
export const providerUnavailable = (detail: string): string => `email provider unavailable: ${detail}`;
export const providerRejected = (detail: string): string => `email provider rejected the message: ${detail}`;

/** A schema problem of a request body, in this interface's words. */
export function describeBodyProblem(problem: Problem): string {
  switch (problem.kind) {
    case 'missing':
      return missingRequiredFields(problem.fields);
    case 'unknown':
      return unknownField(problem.field);
    case 'invalid':
      // Every body is an object: a body of another type is that, not a bad field.
      if (problem.field === '' && problem.keyword === 'type') return BODY_NOT_OBJECT;
      return invalidField(problem.field || 'body', problem.problem);
  }
}

/** An empty PATCH body: what it may change instead. */
export const nothingToChange = (fields: readonly string[]): string =>
  `nothing to change: give at least one of ${fields.join(', ')}`;

/**
 * describeBodyProblem for a PATCH body that may change `fields`: an empty one
 * (the schema's minProperties) names them rather than the schema's keyword.
 */
export function describePatchProblem(fields: readonly string[]): DescribeProblem {
  return (problem) =>
    problem.kind === 'invalid' && problem.field === '' && problem.keyword === 'minProperties'
      ? nothingToChange(fields)
      : describeBodyProblem(problem);
}

// Scheduled sends: `send_at` on send and bulk (core/email/send/scheduled-sends.ts).
export const SEND_AT_MALFORMED =
  'send_at must be an RFC 3339 timestamp with a time zone offset, e.g. 2030-01-31T09:00:00+01:00 or 2030-01-31T08:00:00Z.';
export const SEND_AT_IN_PAST = 'send_at must be in the future.';
export const SEND_AT_TOO_FAR = 'send_at must be at most 30 days ahead.';
export const SCHEDULED_MESSAGE = 'email scheduled.';
export const SCHEDULED_TOO_LARGE =
  'a scheduled email carries at most 12 MB of request body; give large attachments by URL (path), fetched at send time.';
export const SCHEDULED_EMAIL_NOT_FOUND = 'scheduled email not found.';
/** A company (per mode) holds SCHEDULED_MAX_PENDING scheduled emails not sent yet (409). */
export const tooManyScheduled = (max: number) =>
  `too many scheduled emails pending for this company. maximum is ${max.toLocaleString('en-US')}; cancel some or wait until they are sent.`;
/** A company's (per mode) pending scheduled emails hold SCHEDULED_MAX_PENDING_MB of stored request (409). */
export const tooMuchScheduledBody = (maxChars: number) =>
  `scheduled emails pending for this company hold too much request body. maximum is ${Math.floor(maxChars / 1_048_576).toLocaleString('en-US')} MB; cancel some or wait until they are sent.`;
/** A cancelled scheduled email's record: `failed` with this error. */
export const CANCELLED = 'cancelled';
/** POST /track: a view key past its events per minute (429). */
export const TOO_MANY_EVENTS = 'too many events for this email. try again later.';
/** One company has RENDER_WAITING_PER_TENANT custom-HTML messages waiting to render already (429). */
export const RENDER_QUEUE_FULL = 'too many html_body emails waiting to render. try again later.';
/** A cancelled workflow run's email the provider never took: `failed` with this error (a reset sends it). */
export const RUN_CANCELLED = 'cancelled: its workflow run was cancelled before the provider took the email.';
export const ALREADY_SENT = 'email already sent; it can no longer be cancelled.';
export const BEING_SENT = 'email is being sent; it can no longer be cancelled.';
export const alreadyFailed = (error: string | null) =>
  `email already failed (${error ?? 'unknown error'}); there is nothing to cancel.`;
/** A scheduled record whose stored request is gone (it was lost before its time came). */
export const SCHEDULED_REQUEST_LOST = 'scheduled email lost: its stored request is missing; not sent.';
