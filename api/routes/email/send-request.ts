import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import { IDEMPOTENCY_KEY_INVALID } from '../../../core/validation.ts';
import {
  ATTACHMENT_CONTENT_AND_PATH,
  ATTACHMENT_TOO_LARGE,
  BODY_NOT_OBJECT,
  DAILY_LIMIT_REACHED,
  DOMAIN_NOT_ALLOWED,
  IDEMPOTENCY_KEY_BODY_MISMATCH,
  IDEMPOTENCY_KEY_IN_PROGRESS,
  IDEMPOTENCY_KEY_NEEDS_AUTHENTICATION,
  IDEMPOTENCY_KEY_UNFINISHED,
  INVALID_BASE64,
  INVALID_EMAIL_ADDRESS,
  NOT_CONFIGURED,
  RECIPIENT_REQUIRED,
  SEND_AT_IN_PAST,
  SEND_AT_TOO_FAR,
  SENDING_RATE_LIMITED,
  SUBJECT_LINE_BREAK,
  SUBJECT_REQUIRED,
  SUBJECT_TOO_LONG,
  TEMPLATE_NOT_FOUND,
  TOO_MANY_ATTACHMENTS,
  TOO_MANY_EMAILS,
  TOO_MANY_RECIPIENTS,
  TOO_MANY_SIGNUP_SENDS,
  allRecipientsSuppressed,
  invalidField,
  missingRequiredFields,
  providerRejected,
  providerUnavailable,
  tooManyScheduled,
  tooMuchScheduledBody,
  unknownField,
} from '../../../core/email/email-messages.ts';
import { UNAUTHORIZED } from '../../../core/identity.ts';
import { ReplayedFailure, type RequestKind } from '../../../core/email/idempotency/index.ts';
import { idempotencyKeySchema } from '../../../core/validation.ts';
import { failure, type RouteContext, type RouteSpec } from '../../route.ts';
import type { AppDeps } from '../../types.ts';

/**
 * JSON bodies up to 45 MB for send and bulk: one message may carry 30 MB of
 * attachments after base64 decoding, which is 40 MB encoded. Larger → 413.
 */
export const SEND_BODY_LIMIT = '45mb';

/** Send's and bulk's `Idempotency-Key` (core/email/request-idempotency.ts). */
export const SendHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    idempotencyKeySchema(
      'Sends once per key of the company, kept 24 hours: repeating the request with the same key and body ' +
        'answers the first answer again (header `Idempotent-Replayed: true`) without calling the provider; ' +
        'the same key with another body → 409. One header of 1 to 255 printable ASCII characters.',
    ),
  ),
});

/**
 * The interface's limit messages for arrays so long that the parser stops
 * reading them (past 1,000 items), as for one item past the limit: a bulk of
 * 1,001 emails says what one of 101 says. (A bulk item's recipients past
 * that refuse the whole request, in the same words.)
 */
const ARRAY_MESSAGES = {
  emails: TOO_MANY_EMAILS,
  to: TOO_MANY_RECIPIENTS,
  cc: TOO_MANY_RECIPIENTS,
  bcc: TOO_MANY_RECIPIENTS,
  attachments: TOO_MANY_ATTACHMENTS,
} as const;

/**
 * What send and bulk declare alike: the `email:send` scope, open to
 * unauthenticated callers for the signup templates (narrowed by the core),
 * a large JSON body of `schema` and an optional Idempotency-Key.
 */
export const sendRequest = (schema: TSchema) =>
  ({
    tag: 'email',
    auth: { scope: 'email:send', anonymous: true },
    body: { schema, limit: SEND_BODY_LIMIT, arrayMessages: ARRAY_MESSAGES },
    headers: SendHeaders,
    describeProblem: () => IDEMPOTENCY_KEY_INVALID,
  }) as const satisfies Partial<RouteSpec<TObject, TObject, typeof SendHeaders>>;

/**
 * What one email's fields may be refused with (a send's 400, a bulk item's
 * `error`), most of them the interface's own words; a few as examples of a
 * message with a variable part.
 */
export const EMAIL_FIELD_MESSAGES = [
  missingRequiredFields(['to', 'subject']),
  RECIPIENT_REQUIRED,
  SUBJECT_REQUIRED,
  INVALID_EMAIL_ADDRESS,
  DOMAIN_NOT_ALLOWED,
  TEMPLATE_NOT_FOUND,
  TOO_MANY_RECIPIENTS,
  ATTACHMENT_TOO_LARGE,
  TOO_MANY_ATTACHMENTS,
  TOO_MANY_EMAILS,
  SUBJECT_TOO_LONG,
  SUBJECT_LINE_BREAK,
  INVALID_BASE64,
  ATTACHMENT_CONTENT_AND_PATH,
  unknownField('template'),
  invalidField('resource_id_ref', 'must not contain control characters'),
  SEND_AT_IN_PAST,
  SEND_AT_TOO_FAR,
  allRecipientsSuppressed([{ email: 'jane@example.com', reason: 'bounce' }], false),
];

/** What the provider step may answer for one email (a send's 500, a bulk item's `error`). */
export const PROVIDER_MESSAGES = [
  NOT_CONFIGURED,
  providerUnavailable('HTTP 503'),
  providerRejected('The from address does not match a verified Sender Identity.'),
];

/** The answers send and bulk share about who is calling. */
export const SEND_AUTH_FAILURES = {
  401: failure('No valid API key or identity headers (a template other than the signup ones).', [
    UNAUTHORIZED,
  ]),
  403: failure('The API key lacks the email:send scope.'),
  429: failure(
    'See Retry-After: too many unauthenticated signup sends to this address or from this client; ' +
      "the company's daily sending limit is spent; or every provider is " +
      'at its maximum rate for longer than a send waits.',
    [TOO_MANY_SIGNUP_SENDS, DAILY_LIMIT_REACHED, SENDING_RATE_LIMITED],
  ),
};

export const INVALID_PAYLOAD = failure('Invalid payload.', [
  BODY_NOT_OBJECT,
  ...EMAIL_FIELD_MESSAGES,
  IDEMPOTENCY_KEY_INVALID,
  IDEMPOTENCY_KEY_NEEDS_AUTHENTICATION,
]);

/** The header of an answer an Idempotency-Key may repeat: a success, or a kept failure. */
export const REPLAYED_HEADER = {
  'Idempotent-Replayed':
    '`true` when this answers again an earlier request with the same Idempotency-Key and body (nothing was sent again); absent otherwise.',
};

/** What an Idempotency-Key adds to send's and bulk's answers. */
export const IDEMPOTENCY_FAILURES = {
  409: failure(
    'The Idempotency-Key was used with a different body, its first request is still running, or it stopped before answering. ' +
      'With `send_at`: the company already holds SCHEDULED_MAX_PENDING scheduled emails not sent yet ' +
      'or SCHEDULED_MAX_PENDING_MB of their stored requests (the defaults in these examples).',
    [
      IDEMPOTENCY_KEY_BODY_MISMATCH,
      IDEMPOTENCY_KEY_IN_PROGRESS,
      IDEMPOTENCY_KEY_UNFINISHED,
      tooManyScheduled(100_000),
      tooMuchScheduledBody(1024 * 1_048_576),
    ],
  ),
};

/**
 * Runs a send or a bulk, once per `Idempotency-Key` when the request carries
 * one (an empty one was refused by validation): a repeat gets the first answer again,
 * success or kept failure, marked `Idempotent-Replayed: true`.
 */
export async function answerOnce<T>(
  ctx: RouteContext<TObject, TObject, typeof SendHeaders>,
  { email }: AppDeps,
  kind: RequestKind,
  run: () => Promise<T>,
): Promise<T> {
  const key = ctx.valid.headers['idempotency-key'];
  if (!key) return run();
  const { result, replayed } = await email
    .once(ctx.state.principal, { key, kind, body: ctx.request.body, run })
    .catch((err: unknown) => {
      // A kept failure (the provider refused the message) is a replay too.
      if (err instanceof ReplayedFailure) ctx.set('Idempotent-Replayed', 'true');
      throw err;
    });
  if (replayed) ctx.set('Idempotent-Replayed', 'true');
  return result;
}
