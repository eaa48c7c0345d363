import type { TSchema } from '@sinclair/typebox';
import { failure, type RouteSpec } from '../../route.ts';

/**
 * JSON bodies up to 45 MB for send and bulk: one message may carry 30 MB of
 * attachments after base64 decoding, which is 40 MB encoded. Larger → 413.
 */
export const SEND_BODY_LIMIT = '45mb';

/**
 * What send and bulk declare alike: the `email:send` scope, open to
 * unauthenticated callers for the signup templates (narrowed by the core),
 * and a large JSON body of `schema`.
 */
export const sendRequest = (schema: TSchema) =>
  ({
    tag: 'email',
    auth: { scope: 'email:send', anonymous: true },
    body: { schema, limit: SEND_BODY_LIMIT },
  }) as const satisfies Partial<RouteSpec>;

/** The answers send and bulk share about who is calling. */
export const SEND_AUTH_FAILURES = {
  401: failure('No valid API key or identity headers (a template other than the signup ones).'),
  403: failure('The API key lacks the email:send scope.'),
  429: failure('Too many unauthenticated signup sends to this address or from this client; see Retry-After.'),
};

export const INVALID_PAYLOAD = failure('Invalid payload.');
