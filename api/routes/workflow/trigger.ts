import { createHmac, randomUUID } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import { CALLER_MEMO_KEY, type Caller } from '../../../core/identity.ts';
import type { WorkflowDefinition } from '../../../core/workflows/definition.ts';
import { companyPriority } from '../../../core/workflows/fairness.ts';
import { COMPANY_ID, USER_ID } from '../../../core/workflows/search-attributes.ts';
import { workflowTriggers } from '../../../core/metrics.ts';
import { IDEMPOTENCY_KEY_INVALID } from '../../../core/validation.ts';
import { validateWorkflowInput } from '../../../core/workflows/validate-input.ts';
import { statusOf } from '../../middleware/error-handler.ts';
import { defineRoute, failure } from '../../route.ts';
import type { AppMiddleware } from '../../types.ts';
import { WORKFLOW_ACCESS, WORKFLOW_AUTH_FAILURES } from './owner.ts';
import { TriggerHeaders, TriggerResponseSchema, WorkflowNameParams } from './run-schema.ts';
import { withinDeadline } from '../../temporal-deadlines.ts';
import { temporalError } from './temporal-errors.ts';
import {
  BODY_NOT_OBJECT as WORKFLOW_BODY_NOT_OBJECT,
  conflictingFields,
  notTheCaller,
  workflowNotFound,
} from '../../../core/workflows/workflow-messages.ts';
import { missingRequiredFields } from '../../../core/email/email-messages.ts';

/**
 * The run id: Temporal's workflow id, what operators search for in the Web
 * UI. With an Idempotency-Key it is an HMAC under the server's secret of the
 * caller's company (and, for a key bound to an organization, that
 * organization; for a test key, its mode), the workflow name and the key, so a repeat trigger lands
 * on the same run, two tenants' keys never collide, and nobody without the
 * secret can compute (or start first) another caller's run. Without a key it
 * is random.
 */
export function runIdFor(
  name: string,
  idempotencyKey: string | undefined,
  reach: { companyId: string; boundOrganizationId?: string | undefined; test?: boolean | undefined },
  secret: string,
): string {
  if (!idempotencyKey) return `${name}-${randomUUID()}`;
  // Company-wide live callers keep the ids they always had; an organization
  // and test mode each make a scope of their own, so a test key's key never
  // lands on (or takes first) a live run.
  const scope = [
    reach.companyId,
    ...(reach.boundOrganizationId === undefined ? [] : [reach.boundOrganizationId]),
    ...(reach.test ? ['test'] : []),
  ];
  const digest = createHmac('sha256', secret)
    .update(JSON.stringify([...scope, name, idempotencyKey]))
    .digest('hex');
  return `${name}-${digest.slice(0, 40)}`;
}

/** Workflow inputs are small (ids, a few addresses): 64 KB is far above any valid body. */
export const TRIGGER_BODY_LIMIT = '64kb';

/**
 * The run's search attributes (Web UI: `CompanyId = "…"`): the company and
 * user the run is about (its input's, else the caller's), then those its
 * definition declares (EIN runs: the email action). The workflow adds
 * `EmailId` once its email exists.
 */
export function searchAttributesFor(
  def: Pick<WorkflowDefinition, 'searchAttributes'>,
  input: Record<string, unknown>,
  caller: Caller,
): SearchAttributePair[] {
  const text = (value: unknown) => (typeof value === 'string' && value ? value : undefined);
  const pairs: SearchAttributePair[] = [];
  const companyId = text(input['companyId']) ?? caller.companyId;
  const userId = text(input['userId']) ?? caller.userId;
  if (companyId) pairs.push({ key: COMPANY_ID, value: companyId });
  if (userId) pairs.push({ key: USER_ID, value: userId });
  for (const [field, key] of Object.entries(def.searchAttributes)) {
    const value = text(input[field]);
    if (value) pairs.push({ key, value });
  }
  return pairs;
}

type TriggerResult = 'started' | 'already_started' | 'invalid' | 'failed';
const count = (ctx: { state: { workflow: { name: string } } }, result: TriggerResult) =>
  workflowTriggers.inc({ workflow: ctx.state.workflow.name, result });

/** Counts a trigger refused with 400 (its body, or its Idempotency-Key) as `invalid`. */
const countInvalid: AppMiddleware = async (ctx, next) => {
  try {
    await next();
  } catch (err) {
    if (statusOf(err) === 400) count(ctx, 'invalid');
    throw err;
  }
};

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
  ...WORKFLOW_ACCESS.trigger,
  body: { schema: Type.Object({}, { additionalProperties: true }), limit: TRIGGER_BODY_LIMIT },
  params: WorkflowNameParams,
  headers: TriggerHeaders,
  describeProblem: () => IDEMPOTENCY_KEY_INVALID,
  around: countInvalid,
  responses: {
    202: {
      description: 'Started (or, with the same Idempotency-Key, already started).',
      schema: TriggerResponseSchema,
    },
    400: failure('Invalid input: the message names the field.', [
      WORKFLOW_BODY_NOT_OBJECT,
      missingRequiredFields(['recipients']),
      'userId must be a UUID',
      conflictingFields('user_id', 'userId'),
      IDEMPOTENCY_KEY_INVALID,
    ]),
    ...WORKFLOW_AUTH_FAILURES,
    403: failure('The API key lacks the workflows:trigger scope, or the body names another caller.', [
      notTheCaller('companyId'),
    ]),
    404: failure('Unknown workflow name.', [workflowNotFound('NAME')]),
    500: failure('Temporal could not start the run; the message carries the cause.'),
  },
  async handler(ctx, { temporal, config }) {
    const def = ctx.state.workflow;
    const caller = ctx.state.company;
    const input = validateWorkflowInput(def, ctx.request.body, caller, {
      blockedDomains: config.blockedEmailDomains,
    });
    const workflowId = runIdFor(
      def.name,
      ctx.valid.headers['idempotency-key'],
      {
        companyId: caller.companyId,
        boundOrganizationId: ctx.state.principal.boundOrganizationId,
        test: ctx.state.principal.test,
      },
      config.secret,
    );

    try {
      await withinDeadline(() =>
        temporal.workflow.start(def.workflowType, {
          taskQueue: config.temporal.taskQueue,
          workflowId,
          args: [input],
          memo: { [CALLER_MEMO_KEY]: caller },
          typedSearchAttributes: searchAttributesFor(def, input, caller),
          ...companyPriority(caller.companyId),
          // A run id is used once, ever: a repeat of a finished run's key is
          // rejected (caught below) instead of starting a second run, and a
          // repeat while it runs attaches to it.
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
          workflowIdConflictPolicy: 'USE_EXISTING',
        }),
      );
      count(ctx, 'started');
    } catch (err) {
      // Only reachable with an Idempotency-Key: random ids never collide.
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) {
        count(ctx, 'failed');
        throw temporalError(err, 'start workflow');
      }
      count(ctx, 'already_started');
    }
    ctx.status = 202;
    ctx.body = { success: true, runId: workflowId, workflowName: def.name };
  },
});
