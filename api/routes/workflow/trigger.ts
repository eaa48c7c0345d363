import { createHash, randomUUID } from 'node:crypto';
import type Router from '@koa/router';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { AppDeps } from '../../app.ts';
import { HttpError } from '../../errors.ts';
import { findWorkflow, type WorkflowDefinition } from '../../../core/workflows/registry.ts';
import { validateWorkflowInput } from '../../../core/workflows/validate-input.ts';
import { CALLER_MEMO_KEY } from '../../../workflows/memo.ts';
import { callerFromHeaders, hasControlCharacters } from './caller.ts';
import { TEMPORAL_DEADLINE_MS, temporalError } from './temporal-errors.ts';

/** Looks the path's name up in the registry; unknown → 404 with the name in the message (seed). */
export function workflowFromPath(name: string): WorkflowDefinition {
  const def = findWorkflow(name);
  if (!def) throw new HttpError(404, `workflow '${name}' not found`);
  return def;
}

/**
 * The run id — Temporal's workflow id, what operators search for in the Web
 * UI. With an Idempotency-Key it is derived from the key, the workflow name
 * and the caller's company, so a repeat trigger lands on the same run and two
 * tenants' keys never collide; without one it is random.
 */
export function runIdFor(
  name: string,
  idempotencyKey: string | undefined,
  companyId: string | undefined,
): string {
  if (!idempotencyKey) return `${name}-${randomUUID()}`;
  const digest = createHash('sha256')
    .update(JSON.stringify([idempotencyKey, name, companyId ?? '']))
    .digest('hex');
  return `${name}-${digest.slice(0, 40)}`;
}

/**
 * POST /api/workflow/:workflowName — validate the body against the workflow's
 * input schema, then start the run and answer 202 at once; the worker does the
 * rest. Nothing starts when the body is invalid.
 */
export function triggerRoute(router: Router, { temporal, config }: AppDeps): void {
  router.post('/api/workflow/:workflowName', async (ctx) => {
    const def = workflowFromPath(ctx.params['workflowName'] ?? '');
    const input = validateWorkflowInput(def, ctx.request.body);
    const caller = callerFromHeaders(ctx);
    const idempotencyKey = ctx.get('idempotency-key') || undefined;
    if (idempotencyKey && (idempotencyKey.length > 255 || hasControlCharacters(idempotencyKey))) {
      throw new HttpError(400, 'Idempotency-Key must be at most 255 printable characters');
    }
    const workflowId = runIdFor(def.name, idempotencyKey, caller.companyId);

    try {
      await temporal.withDeadline(Date.now() + TEMPORAL_DEADLINE_MS, () =>
        temporal.workflow.start(def.workflowType, {
          taskQueue: config.temporal.taskQueue,
          workflowId,
          args: [input],
          memo: { [CALLER_MEMO_KEY]: caller },
          // A run id is used once, ever: a repeat of a finished run's key is
          // rejected (caught below) instead of starting a second run, and a
          // repeat while it runs attaches to it.
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
          workflowIdConflictPolicy: 'USE_EXISTING',
        }),
      );
    } catch (err) {
      // Only reachable with an Idempotency-Key: random ids never collide.
      if (!(err instanceof WorkflowExecutionAlreadyStartedError))
        throw temporalError(err, 'failed to start workflow');
    }
    ctx.status = 202;
    ctx.body = { success: true, runId: workflowId, workflowName: def.name };
  });
}
