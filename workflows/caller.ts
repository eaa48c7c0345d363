import { workflowInfo } from '@temporalio/workflow';
import { CALLER_MEMO_KEY, type Caller } from '../core/identity.ts';

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
