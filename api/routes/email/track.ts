import type Router from '@koa/router';
import type { AppDeps } from '../../app.ts';
import { requireJson } from './caller.ts';

/** The standard 43-byte transparent 1×1 GIF89a. */
export const TRACKING_PIXEL = Buffer.from(
  'R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==',
  'base64',
);

/**
 * GET /api/email/track?view_key=… — the open-tracking pixel. Always the same
 * GIF, whatever the key (unknown, missing, or a database failure): an image
 * in someone's mail client is no place for an error, and the answer must not
 * reveal whether a key exists.
 *
 * POST /api/email/track `{ view_key, event_type }` → `{ success: true }`.
 */
export function trackRoutes(router: Router, deps: Pick<AppDeps, 'email' | 'logger'>): void {
  router.get('/api/email/track', async (ctx) => {
    const raw = ctx.query['view_key'];
    const viewKey = Array.isArray(raw) ? raw[0] : raw;
    try {
      await deps.email.recordOpen(viewKey);
    } catch (err) {
      deps.logger.error({ err }, 'tracking pixel: recording the open failed');
    }
    ctx.status = 200;
    ctx.set('Cache-Control', 'no-store, no-cache, must-revalidate');
    ctx.set('Pragma', 'no-cache');
    ctx.type = 'image/gif';
    ctx.body = TRACKING_PIXEL;
  });

  router.post('/api/email/track', async (ctx) => {
    requireJson(ctx);
    await deps.email.recordEvent(ctx.request.body);
    ctx.body = { success: true };
  });
}
