import {
  CancellationScope,
  isCancellation,
  proxyLocalActivities,
  rootCause,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { WorkflowEventData, WorkflowEventType } from '../core/webhooks/webhook-events.ts';
import { runCaller } from './caller.ts';
import { DATABASE_LOCAL_STEP } from './retry-policy.ts';

// A local activity: one database write at most (none when nobody subscribes), in the run's last task.
const { emitWorkflowEvent } = proxyLocalActivities<Activities>(DATABASE_LOCAL_STEP);

/**
 * Wraps a workflow a company triggers so that its end is told to the
 * company's webhook endpoints: `workflow.completed` with the result,
 * `workflow.failed` with the error, `workflow.cancelled`. The event is a
 * local activity of the run (durable: retried like a database step, and
 * recorded in its history); a cancelled run emits it in a scope the cancellation does
 * not reach. Runs terminated or timed out by Temporal run no code, so they
 * emit nothing (docs/webhooks.md).
 */
export function reportsOutcome<I extends unknown[], R>(
  name: string,
  workflow: (...args: I) => Promise<R>,
): (...args: I) => Promise<R> {
  return async (...args: I): Promise<R> => {
    const caller = runCaller();
    const { workflowId, runId } = workflowInfo();
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
    let result: R;
    try {
      result = await workflow(...args);
    } catch (err) {
      if (isCancellation(err)) await CancellationScope.nonCancellable(() => emit('workflow.cancelled', {}));
      else await emit('workflow.failed', { error: rootCause(err) ?? 'workflow failed' });
      throw err;
    }
    await emit('workflow.completed', { result });
    return result;
  };
}
