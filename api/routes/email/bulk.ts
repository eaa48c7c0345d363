import type Router from '@koa/router';
import type { AppDeps } from '../../app.ts';
import { callerFromHeaders, requireJson } from './caller.ts';

/** POST /api/email/bulk → 200 with per-item results, also when some items failed. */
export function bulkRoute(router: Router, deps: Pick<AppDeps, 'email'>): void {
  router.post('/api/email/bulk', async (ctx) => {
    requireJson(ctx);
    ctx.body = await deps.email.sendBulk(ctx.request.body, callerFromHeaders(ctx));
  });
}
