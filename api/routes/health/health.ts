import { Type } from '@sinclair/typebox';
import { pingDatabase } from '../../../core/db.ts';
import { defineRoute } from '../../route.ts';
import type { AppDeps } from '../../types.ts';

/** Each dependency check gives up after this long: a probe must answer fast, even when a dependency hangs. */
export const READY_CHECK_TIMEOUT_MS = 2000;

export interface CheckResult {
  ok: boolean;
  error?: string;
}

const CheckResultSchema = Type.Object({ ok: Type.Boolean(), error: Type.Optional(Type.String()) });

/** `GET /health`: liveness, no I/O: the process is up and serving HTTP. */
export const healthRoute = defineRoute({
  method: 'get',
  path: '/health',
  operationId: 'health',
  summary: 'Liveness',
  tag: 'health',
  responses: {
    200: {
      description: 'The gateway is up.',
      schema: Type.Object({ success: Type.Literal(true), status: Type.Literal('ok') }),
    },
  },
  handler(ctx) {
    ctx.body = { success: true, status: 'ok' };
  },
});

/**
 * `GET /ready`: readiness. MongoDB answers a ping and Temporal answers for the
 * configured namespace; 503 naming what failed otherwise, so a load balancer
 * (or docker compose) routes traffic only to a gateway that can do its job.
 */
/** `/ready`'s error while the gateway drains its connections (SIGTERM). */
export const SHUTTING_DOWN = 'shutting down';

export const readyRoute = defineRoute({
  method: 'get',
  path: '/ready',
  operationId: 'ready',
  summary: 'Readiness: MongoDB and Temporal answer',
  tag: 'health',
  responses: {
    200: {
      description: 'Both dependencies answer.',
      schema: Type.Object({
        success: Type.Literal(true),
        mongodb: CheckResultSchema,
        temporal: CheckResultSchema,
      }),
    },
    503: {
      description: `A dependency does not answer (\`not ready\`), or the gateway is shutting down (\`${SHUTTING_DOWN}\`).`,
      schema: Type.Object({
        success: Type.Literal(false),
        error: Type.String(),
        mongodb: CheckResultSchema,
        temporal: CheckResultSchema,
      }),
    },
  },
  async handler(ctx, deps) {
    const { mongodb, temporal } = await checkDependencies(deps);
    // A gateway shutting down answers what it took, and takes no more: balancers move on.
    const draining = deps.lifecycle?.draining === true;
    const ready = mongodb.ok && temporal.ok && !draining;
    ctx.status = ready ? 200 : 503;
    ctx.body = ready
      ? { success: true, mongodb, temporal }
      : { success: false, error: draining ? SHUTTING_DOWN : 'not ready', mongodb, temporal };
  },
});

export const healthRoutes = [healthRoute, readyRoute];

export async function checkDependencies(
  deps: Pick<AppDeps, 'db' | 'temporal' | 'config' | 'logger'>,
): Promise<{ mongodb: CheckResult; temporal: CheckResult }> {
  const [mongodb, temporal] = await Promise.all([
    check('mongodb', deps, () => pingDatabase(deps.db)),
    // check() answers at its own timeout; the call itself ends at the deadline every RPC of
    // the gateway's connection gets (api/temporal-deadlines.ts, not the SDK's withDeadline).
    check('temporal', deps, () =>
      deps.temporal.workflowService.describeNamespace({ namespace: deps.config.temporal.namespace }),
    ),
  ]);
  return { mongodb, temporal };
}

/**
 * One dependency's probe, bounded in time. Callers learn which dependency is
 * down and in plain words; the driver's own error (addresses, internals) goes
 * to the log only.
 */
async function check(
  dependency: 'mongodb' | 'temporal',
  deps: Pick<AppDeps, 'config' | 'logger'>,
  probe: () => Promise<unknown>,
): Promise<CheckResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new ProbeTimeout(`no answer within ${READY_CHECK_TIMEOUT_MS}ms`)),
      READY_CHECK_TIMEOUT_MS,
    );
  });
  try {
    await Promise.race([probe(), timeout]);
    return { ok: true };
  } catch (err) {
    deps.logger.warn({ err, dependency }, 'readiness check failed');
    return { ok: false, error: plainReason(err, deps.config.temporal.namespace) };
  } finally {
    clearTimeout(timer);
  }
}

function plainReason(err: unknown, namespace: string): string {
  if (err instanceof ProbeTimeout) return err.message;
  // gRPC NOT_FOUND from describeNamespace: the server answers, the namespace is missing.
  if ((err as { code?: unknown } | null)?.code === 5) return `namespace '${namespace}' not found`;
  return 'unreachable';
}

class ProbeTimeout extends Error {}
