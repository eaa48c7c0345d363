import {
  CancellationScope,
  isCancellation,
  proxyActivities,
  rootCause,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { OutcomeHint } from '../activities/outcome-hint.ts';
import type { Caller } from '../core/identity.ts';
import type { EventAudience, WorkflowEventData, WorkflowEventType } from '../core/webhooks/index.ts';
import { runCaller } from './caller.ts';
import { DATABASE_STEP } from './retry-policy.ts';

/**
 * The event is an activity of the run, not a local one: a local activity
 * runs while its workflow task is being worked on, before the server has
 * accepted that task, and a task the server refuses (a cancel arrived
 * meanwhile: UNHANDLED_COMMAND) is worked on again from its history, where
 * the run may now take another way. Emitted locally, a run cancelled at
 * once after a step failed told `workflow.failed` (from the refused task)
 * and then `workflow.cancelled` (4 runs in 27). An activity is scheduled by
 * a command, which exists only once the server accepted its task, so the
 * event told is the way the run went. One database write at most (none
 * when nobody subscribes).
 */
const { emitWorkflowEvent } = proxyActivities<Activities>(DATABASE_STEP);

/** Who gets a run's events: its caller's company, organization and mode. */
export const audienceOf = (caller: Caller): EventAudience => ({
  companyId: caller.companyId ?? null,
  organizationId: caller.organizationId ?? null,
  test: caller.test === true,
});

/** Handed to a run by `reportsOutcome`: what its last step said about who hears its completion. */
export interface OutcomeReport {
  /**
   * The answer of a last step built with activities/outcome-hint.ts. Nobody
   * hearing: `workflow.completed` is not emitted. No answer (`undefined`: a
   * history recorded before the step gave one) changes nothing.
   */
  lastStepSaid(hint: OutcomeHint | void): void;
}

/**
 * Wraps a workflow a company triggers so that its end is told to the
 * company's webhook endpoints: `workflow.completed` with the result,
 * `workflow.failed` with the error, `workflow.cancelled`. The event is an
 * activity of the run (durable: retried like a database step, and recorded
 * in its history), emitted in a scope a cancellation does not reach:
 * a cancelled run still says so, and a cancel that arrives once the work is
 * done leaves the run completed. Runs terminated or timed out by Temporal run no code, so they
 * emit nothing (docs/webhooks.md).
 *
 * A run whose last step said no endpoint of its company subscribes to
 * `workflow.completed` (`report.lastStepSaid`) completes without that
 * activity, a round trip fewer; the answer is in the step's
 * recorded result, so a replay decides the same. Failures and cancellations
 * are always emitted.
 */
export function reportsOutcome<I extends unknown[], R>(
  name: string,
  workflow: (report: OutcomeReport, ...args: I) => Promise<R>,
): (...args: I) => Promise<R> {
  return async (...args: I): Promise<R> => {
    const caller = runCaller();
    const { workflowId, runId } = workflowInfo();
    let completionHeard = true;
    const report: OutcomeReport = {
      lastStepSaid(hint) {
        if (hint && hint.outcomeHeard === false) completionHeard = false;
      },
    };
    const emit = (type: WorkflowEventType, extra: Partial<WorkflowEventData>) =>
      caller.companyId === undefined
        ? Promise.resolve()
        : emitWorkflowEvent(
            type,
            {
              workflow_name: name,
              workflow_id: workflowId,
              run_id: runId,
              status: type.slice('workflow.'.length) as WorkflowEventData['status'],
              company_id: caller.companyId,
              organization_id: caller.organizationId ?? null,
              ...extra,
            },
            caller.test === true,
          );
    // Every report runs where a cancellation cannot reach it: a cancel that
    // comes once the run's work is done (its email sent) must not turn a
    // finished run into a "cancelled" one without its result.
    const tell = (type: WorkflowEventType, extra: Partial<WorkflowEventData>) =>
      CancellationScope.nonCancellable(() => emit(type, extra));
    let result: R;
    try {
      result = await workflow(report, ...args);
    } catch (err) {
      if (isCancellation(err)) await tell('workflow.cancelled', {});
      else await tell('workflow.failed', { error: rootCause(err) ?? 'workflow failed' });
      throw err;
    }
    if (completionHeard) await tell('workflow.completed', { result });
    return result;
  };
}
