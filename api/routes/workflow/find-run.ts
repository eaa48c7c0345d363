import type { TObject } from '@sinclair/typebox';
import type { Client, WorkflowExecutionDescription, WorkflowHandle } from '@temporalio/client';
import { CALLER_MEMO_KEY, withinReach, type Caller, type Reach } from '../../../core/identity.ts';
import type { WorkflowDefinition } from '../../../core/workflows/definition.ts';
import {
  describeRunIdProblem,
  RUN_ID_REQUIRED,
  RUN_ID_TOO_LONG,
  RUN_NOT_FOUND,
  workflowNotFound,
} from '../../../core/workflows/workflow-messages.ts';
import { WORKFLOW_AUTH_FAILURES, reachOf } from './owner.ts';
import { HttpError } from '../../http-error.ts';
import { failure, type RouteContext, type RouteSpec } from '../../route.ts';
import { RunIdQuery, WorkflowNameParams } from './run-schema.ts';
import { withinDeadline } from '../../temporal-deadlines.ts';
import { temporalError } from './temporal-errors.ts';

type TemporalAction = Parameters<typeof temporalError>[1];

/** What the routes of one run (GET, DELETE) declare alike: identity, `?runId=`, 400 and 404. */
export const RUN_ROUTE = {
  tag: 'workflow',
  params: WorkflowNameParams,
  query: RunIdQuery,
  describeProblem: describeRunIdProblem,
} as const satisfies Partial<RouteSpec<typeof WorkflowNameParams, typeof RunIdQuery>>;

export const RUN_LOOKUP_FAILURES = {
  400: failure('No runId, or one longer than 255 characters.', [RUN_ID_REQUIRED, RUN_ID_TOO_LONG]),
  ...WORKFLOW_AUTH_FAILURES,
  404: failure('Unknown workflow or run, or a run of another company.', [
    RUN_NOT_FOUND,
    workflowNotFound('NAME'),
  ]),
};

/** The run a GET or DELETE names, checked against the path's workflow and the caller's company. */
export async function findRun(
  ctx: RouteContext<typeof WorkflowNameParams, typeof RunIdQuery, TObject>,
  temporal: Client,
  /** What a Temporal failure is said to have stopped (`failed to <action>: …`). */
  action: TemporalAction = 'read workflow run',
) {
  const def = ctx.state.workflow;
  const { runId } = ctx.valid.query;
  return {
    def,
    runId,
    ...(await describeRun(temporal, def, runId, reachOf(ctx), action)),
  };
}

/**
 * The run with this id, if it is a run of `def` and the caller may see it. A
 * run of another workflow is answered exactly like an unknown one (404) so a
 * path cannot be used to peek at runs of other workflows. A run belongs to the
 * company that triggered it, and to the organization it was triggered under:
 * any other company, a key bound to another organization (or to one, for a
 * run triggered without an organization), or a run without an owner (started
 * outside the gateway) gets the same 404 (tenant isolation, as for email
 * records). Cancel goes through here too.
 */
export async function describeRun(
  temporal: Client,
  def: WorkflowDefinition,
  runId: string,
  reach: Reach,
  action: TemporalAction = 'read workflow run',
): Promise<{ handle: WorkflowHandle; desc: WorkflowExecutionDescription }> {
  const handle = temporal.workflow.getHandle(runId);
  let desc: WorkflowExecutionDescription;
  try {
    desc = await withinDeadline(() => handle.describe());
  } catch (err) {
    throw temporalError(err, action);
  }
  if (desc.type !== def.workflowType) throw new HttpError(404, RUN_NOT_FOUND);
  const owner = desc.memo?.[CALLER_MEMO_KEY];
  if (typeof owner !== 'object' || owner === null || !withinReach(owner as Caller, reach))
    throw new HttpError(404, RUN_NOT_FOUND);
  return { handle, desc };
}
