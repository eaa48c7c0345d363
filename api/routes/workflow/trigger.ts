import { createHash, randomUUID } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { CALLER_MEMO_KEY } from '../../../core/identity.ts';
import { workflowTriggers } from '../../../core/metrics.ts';
import { IDEMPOTENCY_KEY_INVALID } from '../../../core/workflows/messages.ts';
import { validateWorkflowInput } from '../../../core/workflows/validate-input.ts';
import { HttpError } from '../../http-error.ts';
import { hasControlCharacters } from '../../middleware/identity.ts';
import { defineRoute, failure } from '../../route.ts';
import { TriggerResponseSchema, WorkflowNameParams } from './schema.ts';
import { TEMPORAL_DEADLINE_MS, temporalError } from './temporal-errors.ts';

/**
 * The run id: Temporal's workflow id, what operators search for in the Web
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
 * POST /api/workflow/:workflowName: validate the body against the workflow's
 * input schema, then start the run and answer 202 at once; the worker does the
 * rest. Nothing starts when the body is invalid.
 */
export const triggerRoute = defineRoute({
  method: 'post',
  path: '/api/workflow/:workflowName',
  operationId: 'triggerWorkflow',
  summary: 'Start a workflow run',
  tag: 'workflow',
  identity: 'memo-safe',
  body: { schema: Type.Object({}, { additionalProperties: true }), limit: '45mb' },
  params: WorkflowNameParams,
  responses: {
    202: {
      description: 'Started (or, with the same Idempotency-Key, already started).',
      schema: TriggerResponseSchema,
    },
    400: failure('Invalid input.'),
    404: failure('Unknown workflow name.'),
    500: failure('Temporal could not start the run; the message carries the cause.'),
  },
  async handler(ctx, { temporal, config }) {
    const def = ctx.state.workflow;
    const count = (result: 'started' | 'already_started' | 'invalid' | 'failed') =>
      workflowTriggers.inc({ workflow: def.name, result });
    let input: Record<string, unknown>;
    try {
      input = validateWorkflowInput(def, ctx.request.body);
    } catch (err) {
      count('invalid');
      throw err;
    }
    const caller = ctx.state.caller;
    const idempotencyKey = ctx.get('idempotency-key') || undefined;
    if (idempotencyKey && (idempotencyKey.length > 255 || hasControlCharacters(idempotencyKey))) {
      count('invalid');
      throw new HttpError(400, IDEMPOTENCY_KEY_INVALID);
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
      count('started');
    } catch (err) {
      // Only reachable with an Idempotency-Key: random ids never collide.
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) {
        count('failed');
        throw temporalError(err, 'start workflow');
      }
      count('already_started');
    }
    ctx.status = 202;
    ctx.body = { success: true, runId: workflowId, workflowName: def.name };
  },
});
