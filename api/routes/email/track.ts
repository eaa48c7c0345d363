import { Type } from '@sinclair/typebox';
import { TRACK_EVENT_TYPES, TrackBodySchema } from '../../../core/email/email-schema.ts';
import { defineRoute, failure, OkResponseSchema } from '../../route.ts';
import {
  EMAIL_NOT_FOUND,
  TOO_MANY_EVENTS,
  invalidEventType,
  missingRequiredFields,
} from '../../../core/email/email-messages.ts';

/** The standard 43-byte transparent 1×1 GIF89a. */
export const TRACKING_PIXEL = Buffer.from(
  'R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==',
  'base64',
);

/**
 * GET /api/email/track?view_key=…: the open-tracking pixel. Always the same
 * GIF, whatever the key (unknown, missing, or a database failure): an image
 * in someone's mail client is no place for an error, and the answer must not
 * reveal whether a key exists. The open is buffered and written with the next
 * batch (core/email/open-buffer.ts), so the GIF never waits on the database.
 */
export const pixelRoute = defineRoute({
  method: 'get',
  path: '/api/email/track',
  operationId: 'trackOpen',
  summary: 'Open-tracking pixel',
  tag: 'email',
  query: Type.Object({ view_key: Type.Optional(Type.String()) }),
  responses: { 200: { description: 'A 1×1 transparent GIF, always.', contentType: 'image/gif' } },
  async handler(ctx, { email }) {
    // A HEAD (served by this GET route) is a scanner's, not a reader's: not an open.
    if (ctx.method === 'GET') await email.recordOpen(ctx.valid.query.view_key);
    ctx.status = 200;
    ctx.set('Cache-Control', 'no-store, no-cache, must-revalidate');
    ctx.set('Pragma', 'no-cache');
    ctx.type = 'image/gif';
    ctx.body = TRACKING_PIXEL;
  },
});

/** POST /api/email/track `{ view_key, event_type }` → `{ success: true }`. */
export const trackEventRoute = defineRoute({
  method: 'post',
  path: '/api/email/track',
  operationId: 'trackEvent',
  summary: 'Record a delivered, opened or clicked event',
  tag: 'email',
  body: { schema: TrackBodySchema, limit: '16kb' },
  responses: {
    200: { description: 'Recorded.', schema: OkResponseSchema },
    400: failure('Invalid payload or event_type.', [
      missingRequiredFields(['view_key']),
      invalidEventType(TRACK_EVENT_TYPES),
    ]),
    404: failure('Unknown view key.', [EMAIL_NOT_FOUND]),
    429: failure('More than 30 events for one view key within a minute (per gateway).', [TOO_MANY_EVENTS]),
  },
  async handler(ctx, { email }) {
    await email.recordEvent(ctx.request.body);
    ctx.body = { success: true };
  },
});
