import type Router from '@koa/router';
import type { AppDeps } from '../../app.ts';
import { callerFromHeaders } from './caller.ts';

/** GET /api/email/status/:email_id → `{ success, data }`; 404 `email not found.` for unknown, malformed or foreign ids. */
export function statusRoute(router: Router, deps: Pick<AppDeps, 'email'>): void {
  router.get('/api/email/status/:email_id', async (ctx) => {
    const data = await deps.email.getStatus(ctx.params['email_id'] ?? '', callerFromHeaders(ctx));
    ctx.body = { success: true, data };
  });
}
