/**
 * One error type for the whole domain. The gateway turns `kind` into an HTTP
 * status (api/errors.ts); activities turn it into Temporal's retryable or
 * non-retryable failures (activities/failures.ts). Keeping the mapping out of
 * the core means the core never knows which of the two called it.
 */
export type ErrorKind =
  /** The caller's input is wrong; retrying cannot help. HTTP 400. */
  | 'validation'
  /** Missing, malformed or unproven identity. HTTP 401. */
  | 'unauthorized'
  /** Known caller, not allowed to do this (an API key without the scope, a body naming someone else). HTTP 403. */
  | 'forbidden'
  /** Too many unauthenticated calls; `retryAfterSeconds` says when to try again. HTTP 429. */
  | 'rate_limited'
  /** A part of the service is switched off until an operator configures it. HTTP 503. */
  | 'unavailable'
  /** Unknown email, run, user or view key. HTTP 404. */
  | 'not_found'
  /** The request contradicts an earlier one (an Idempotency-Key reused with another body). HTTP 409. */
  | 'conflict'
  /** Every recipient of a send is on the company's suppression list; nothing was sent. HTTP 400, not retryable. */
  | 'suppressed'
  /** The service itself lacks configuration (no provider key). HTTP 500, not retryable. */
  | 'not_configured'
  /** The mail provider refused the message (4xx other than 429). HTTP 500, not retryable. */
  | 'provider_rejected'
  /** Network, provider 5xx/429, database unavailable: worth retrying. HTTP 500. */
  | 'transient'
  /**
   * The provider may or may not have accepted the message (a timeout, a
   * connection reset after the request was written) and nothing since has
   * told which: resending could deliver it twice. HTTP 500, not retryable.
   */
  | 'outcome_unknown'
  /** A scheduled email was cancelled before it was sent: it is never sent. HTTP 409, not retryable. */
  | 'cancelled';

export class MailroomError extends Error {
  readonly kind: ErrorKind;
  /** For `rate_limited`: seconds until the caller may try again (HTTP `Retry-After`). */
  readonly retryAfterSeconds: number | undefined;

  constructor(kind: ErrorKind, message: string, options?: { cause?: unknown; retryAfterSeconds?: number }) {
    super(message, options);
    this.name = 'MailroomError';
    this.kind = kind;
    this.retryAfterSeconds = options?.retryAfterSeconds;
  }

  get retryable(): boolean {
    return this.kind === 'transient';
  }
}

export const isMailroomError = (err: unknown): err is MailroomError => err instanceof MailroomError;

/** MongoDB's duplicate-key code; FerretDB answers the same. */
export const DUPLICATE_KEY = 11000;

export const isDuplicateKeyError = (err: unknown): boolean =>
  typeof err === 'object' && err !== null && (err as { code?: unknown }).code === DUPLICATE_KEY;
