import type { TSchema } from '@sinclair/typebox';
import { failure, type RouteSpec } from '../../route.ts';

/**
 * JSON bodies up to 45 MB for send and bulk: one message may carry 30 MB of
 * attachments after base64 decoding, which is 40 MB encoded. Larger → 413.
 */
export const SEND_BODY_LIMIT = '45mb';

/** What send and bulk declare alike: the identity headers and a large JSON body of `schema`. */
export const sendRequest = (schema: TSchema) =>
  ({
    tag: 'email',
    identity: 'headers',
    body: { schema, limit: SEND_BODY_LIMIT },
  }) as const satisfies Partial<RouteSpec>;

export const INVALID_PAYLOAD = failure('Invalid payload.');
