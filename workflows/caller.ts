import { workflowInfo, type ActivityOptions } from '@temporalio/workflow';
import { CALLER_MEMO_KEY, type Caller } from '../core/identity.ts';
import { companyPriority } from '../core/workflows/fairness.ts';

/**
 * Who triggered this run (`X-Company-Id`, `X-Organization-Id`, `X-User-Id`),
 * from the memo the gateway attached at start. Memo, not input, so the
 * identity is visible in the Web UI but not part of the workflow's contract.
 */
export function runCaller(): Caller {
  const memo = workflowInfo().memo?.[CALLER_MEMO_KEY];
  if (typeof memo !== 'object' || memo === null) return {};
  const { companyId, organizationId, userId, test } = memo as Record<string, unknown>;
  const caller: Caller = {};
  if (typeof companyId === 'string') caller.companyId = companyId;
  if (typeof organizationId === 'string') caller.organizationId = organizationId;
  if (typeof userId === 'string') caller.userId = userId;
  if (test === true) caller.test = true;
  return caller;
}

/**
 * A step's options with the caller's company as its fairness key when the
 * run has none (core/workflows/fairness.ts): a run started by a schedule
 * created before schedules carried one. Its step then waits for its
 * company's turn on the task queue like a step of a run started by the API.
 */
export function forCallersCompany(options: ActivityOptions): ActivityOptions {
  if (workflowInfo().priority?.fairnessKey) return options;
  return { ...options, ...companyPriority(runCaller().companyId) };
}
