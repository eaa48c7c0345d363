import type Router from '@koa/router';
import type { AppDeps } from '../../app.ts';
import { requireJson } from './caller.ts';

/**
 * POST /api/email/webhooks/sendgrid — SendGrid's Event Webhook. The signature
 * covers the exact bytes sent, so the core gets the raw body, not the parsed one.
 */
export function webhookRoute(router: Router, deps: Pick<AppDeps, 'email'>): void {
  router.post('/api/email/webhooks/sendgrid', async (ctx) => {
    requireJson(ctx);
    const rawBody = typeof ctx.request.rawBody === 'string' ? ctx.request.rawBody : '';
    await deps.email.handleSendGridWebhook(rawBody, ctx.headers);
    ctx.body = { success: true };
  });
}
