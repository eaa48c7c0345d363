import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import type { Config } from '../../../core/config.ts';
import type { EmailService } from '../../../core/email/contract.ts';
import { CALLER_MEMO_KEY, type Caller, type Principal } from '../../../core/identity.ts';
import type { Logger } from '../../../core/logger.ts';
import { companyPriority } from '../../../core/workflows/fairness.ts';
import { COMPANY_ID, EMAIL_ID, USER_ID } from '../../../core/workflows/search-attributes.ts';
import {
  SCHEDULED_SEND_WORKFLOW_TYPE,
  scheduledRunId,
  type ScheduledSendInput,
} from '../../../core/workflows/scheduled-send.ts';
import { withinDeadline } from '../../temporal-deadlines.ts';

/**
 * Starting scheduled emails' workflow runs (workflows/scheduled-send.ts).
 *
 * The gateway starts an email's run right after its record is written; the
 * answer does not wait more than START_DEADLINE_MS for Temporal. A run that
 * could not be started (Temporal unreachable, the gateway gone mid-request)
 * is not lost: its stored request still says `run_started_at: null`, and the
 * outbox (startScheduledOutbox, in every gateway process) starts it once
 * Temporal answers again. Starting twice is harmless: the run id is the
 * email's (`scheduled-email-<email_id>`), so a second start finds the first.
 */

/** How long a scheduling request waits for Temporal before leaving its run to the outbox. */
export const START_DEADLINE_MS = 2_000;
/** How often the outbox looks for runs not started. */
export const OUTBOX_INTERVAL_MS = 5_000;
/** Left to the request that scheduled it first: the outbox takes emails older than this. */
export const OUTBOX_GRACE_MS = 15_000;
const OUTBOX_BATCH = 100;

export interface RunStarter {
  temporal: Client;
  config: Config;
  email: EmailService;
}

export interface ScheduledRun {
  emailId: string;
  sendAt: string;
  caller: Caller;
}

/** Starts one email's run (or finds it started) and marks its stored request; throws when Temporal fails. */
export async function startScheduledRun(deps: RunStarter, run: ScheduledRun): Promise<void> {
  const input: ScheduledSendInput = { emailId: run.emailId, sendAt: run.sendAt };
  const attributes: SearchAttributePair[] = [{ key: EMAIL_ID, value: run.emailId }];
  if (run.caller.companyId) attributes.push({ key: COMPANY_ID, value: run.caller.companyId });
  if (run.caller.userId) attributes.push({ key: USER_ID, value: run.caller.userId });
  try {
    await withinDeadline(
      () =>
        deps.temporal.workflow.start(SCHEDULED_SEND_WORKFLOW_TYPE, {
          taskQueue: deps.config.temporal.taskQueue,
          workflowId: scheduledRunId(run.emailId),
          args: [input],
          memo: { [CALLER_MEMO_KEY]: run.caller },
          typedSearchAttributes: attributes,
          ...companyPriority(run.caller.companyId),
          // One run per email, ever: a finished run is not started again.
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
          workflowIdConflictPolicy: 'USE_EXISTING',
        }),
      START_DEADLINE_MS,
    );
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
  await deps.email.scheduled.markStarted(run.emailId);
}

/**
 * After a send or bulk scheduled emails: their runs, started now if
 * Temporal answers in time, else left to the outbox (logged, never an error
 * to the caller: the email is recorded and will be sent).
 */
export async function startRunsFor(
  deps: RunStarter & { logger: Logger },
  principal: Principal,
  scheduled: ReadonlyArray<{ email_id: string; send_at: string }>,
): Promise<void> {
  const caller: Caller = { ...principal.caller, ...(principal.test ? { test: true } : {}) };
  await Promise.all(
    scheduled.map((s) =>
      startScheduledRun(deps, { emailId: s.email_id, sendAt: s.send_at, caller }).catch((err: unknown) =>
        deps.logger.warn(
          { email_id: s.email_id, err: err instanceof Error ? err.message : String(err) },
          'scheduled email recorded; its run will be started by the outbox',
        ),
      ),
    ),
  );
}

export interface OutboxHandle {
  /** Stops the timer and waits for a pass in progress. */
  stop(): Promise<void>;
}

/**
 * The outbox: every OUTBOX_INTERVAL_MS, the scheduled emails whose run was
 * not started (older than OUTBOX_GRACE_MS) get it started. A pass stops at
 * the first failure (Temporal is still down) and the next pass tries again.
 */
export function startScheduledOutbox(
  deps: RunStarter & { logger: Logger },
  options: { intervalMs?: number; graceMs?: number } = {},
): OutboxHandle {
  let running: Promise<void> | undefined;
  const pass = async () => {
    const before = new Date(Date.now() - (options.graceMs ?? OUTBOX_GRACE_MS));
    for (const doc of await deps.email.scheduled.unstarted(before, OUTBOX_BATCH)) {
      const caller: Caller = { companyId: doc.company_id };
      if (doc.organization_id) caller.organizationId = doc.organization_id;
      if (doc.user_id) caller.userId = doc.user_id;
      if (doc.test) caller.test = true;
      await startScheduledRun(deps, { emailId: doc._id, sendAt: doc.send_at.toISOString(), caller });
      deps.logger.info({ email_id: doc._id }, 'scheduled email run started by the outbox');
    }
  };
  const timer = setInterval(() => {
    if (running) return;
    running = pass()
      .catch((err: unknown) =>
        deps.logger.warn(
          { err: err instanceof Error ? err.message : String(err) },
          'scheduled email outbox: runs not started yet; retrying',
        ),
      )
      .finally(() => (running = undefined));
  }, options.intervalMs ?? OUTBOX_INTERVAL_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
