import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { temporalNamespace } from './env.ts';

/**
 * Resets a run to its first workflow task through Temporal's reset API on the
 * real server, as an operator's Reset does (Web UI, `temporal workflow reset
 * --type FirstWorkflowTask`): the current execution is terminated and a new
 * one starts under the same workflow id. Answers the new execution's run id.
 */
export async function resetToFirstTask(temporal: Client, workflowId: string): Promise<string> {
  const handle = temporal.workflow.getHandle(workflowId);
  const history = await handle.fetchHistory();
  const firstTask = history.events?.find((e) => e.workflowTaskCompletedEventAttributes);
  assert.ok(firstTask?.eventId, 'the run has a completed first workflow task');
  const { runId } = await handle.describe();
  const answer = await temporal.workflowService.resetWorkflowExecution({
    namespace: temporalNamespace(),
    workflowExecution: { workflowId, runId },
    reason: 'operator reset (test)',
    workflowTaskFinishEventId: firstTask.eventId,
    requestId: randomUUID(),
  });
  assert.ok(answer.runId);
  return answer.runId;
}
