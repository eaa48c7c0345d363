import type Router from '@koa/router';
import type { AppDeps } from '../../app.ts';
import { callerFromHeaders, requireJson } from './caller.ts';

/** POST /api/email/send → 200 `{ success, email_id, provider_id, message }`. */
export function sendRoute(router: Router, deps: Pick<AppDeps, 'email'>): void {
  router.post('/api/email/send', async (ctx) => {
    requireJson(ctx);
    const result = await deps.email.send(ctx.request.body, callerFromHeaders(ctx));
    ctx.body = { success: true, ...result };
  });
}
