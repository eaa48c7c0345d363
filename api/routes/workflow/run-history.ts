import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import { LRUCache } from 'lru-cache';
import { EventType, hasEvent, type HistoryEvent } from './history-events.ts';

const TASK_STARTED = EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED;

/**
 * What the status poll needs of a RUNNING run's history, without fetching the
 * whole history on every GET (a run with many steps has hundreds of events):
 *
 * - whether a worker has started its first workflow task (pending vs
 *   running): only the first few events can tell. A run with at most 2
 *   events (started, first task scheduled) is pending without asking; once a
 *   run is seen running it stays so (cached by run id); otherwise the first
 *   page of 3 events answers, and only a run whose first task has not started
 *   although other events (signals, a cancel request) came in needs the rest;
 * - its latest progress, and whether a cancel was requested: the last
 *   RECENT_EVENTS events, read backwards in one page (a cancel request is
 *   followed by a few events of its own before the run closes: the next
 *   workflow task, the steps' cancellations).
 *
 * Returns the events mapStatus/viewRun look at: some of the first and the last.
 */
const startedRuns = new LRUCache<string, true>({ max: 10_000 });

/** Events read from the end of a running run's history. */
const RECENT_EVENTS = 8;

export async function runningHistory(
  client: Client,
  desc: WorkflowExecutionDescription,
): Promise<HistoryEvent[]> {
  const execution = { workflowId: desc.workflowId, runId: desc.runId };
  const namespace = client.options.namespace;
  const historyLength = Number(desc.historyLength);
  const last = await client.workflowService.getWorkflowExecutionHistoryReverse({
    namespace,
    execution,
    maximumPageSize: RECENT_EVENTS,
  });
  // Oldest first, as the rest: the run's last event ends the list.
  const lastEvents = [...(last.history?.events ?? [])].reverse();
  if (historyLength <= 2 || startedRuns.has(desc.runId)) {
    const started = historyLength > 2;
    return [...(started ? [{ eventType: TASK_STARTED }] : []), ...lastEvents];
  }
  const first = await client.workflowService.getWorkflowExecutionHistory({
    namespace,
    execution,
    maximumPageSize: 3,
  });
  let events = first.history?.events ?? [];
  const hasStarted = (list: HistoryEvent[]) => hasEvent(list, TASK_STARTED);
  if (!hasStarted(events) && first.nextPageToken?.length) {
    // Rare: events arrived before any worker picked the run up; read it all.
    const handle = client.workflow.getHandle(desc.workflowId, desc.runId);
    events = (await handle.fetchHistory()).events ?? [];
  }
  if (hasStarted(events)) startedRuns.set(desc.runId, true);
  return [...events, ...lastEvents];
}
