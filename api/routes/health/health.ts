import { Router } from '@koa/router';
import type { AppDeps } from '../../app.ts';
import { pingDatabase } from '../../../core/db.ts';

/** Each dependency check gives up after this long: a probe must answer fast, even when a dependency hangs. */
export const READY_CHECK_TIMEOUT_MS = 2000;

export interface CheckResult {
  ok: boolean;
  error?: string;
}

/**
 * `GET /health`: liveness, no I/O — the process is up and serving HTTP.
 * `GET /ready`: readiness — MongoDB answers a ping and Temporal answers for the
 * configured namespace; 503 naming what failed otherwise, so a load balancer
 * (or docker compose) routes traffic only to a gateway that can do its job.
 */
export function healthRoutes(deps: Pick<AppDeps, 'db' | 'temporal' | 'config'>): Router {
  const router = new Router();

  router.get('/health', (ctx) => {
    ctx.body = { success: true, status: 'ok' };
  });

  router.get('/ready', async (ctx) => {
    const [mongodb, temporal] = await Promise.all([
      check(() => pingDatabase(deps.db)),
      check(async () => {
        // The gRPC deadline ends the call itself a little before check()'s own timer, so
        // no call is left running in the background after /ready has answered.
        const deadline = Date.now() + READY_CHECK_TIMEOUT_MS - 250;
        await deps.temporal.connection.withDeadline(deadline, () =>
          deps.temporal.workflowService.describeNamespace({ namespace: deps.config.temporal.namespace }),
        );
      }),
    ]);
    const ready = mongodb.ok && temporal.ok;
    ctx.status = ready ? 200 : 503;
    ctx.body = ready
      ? { success: true, mongodb, temporal }
      : { success: false, error: 'not ready', mongodb, temporal };
  });

  return router;
}

async function check(probe: () => Promise<unknown>): Promise<CheckResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no answer within ${READY_CHECK_TIMEOUT_MS}ms`)),
      READY_CHECK_TIMEOUT_MS,
    );
  });
  try {
    await Promise.race([probe(), timeout]);
    return { ok: true };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  } finally {
    clearTimeout(timer);
  }
}
