import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import { recordEmailId } from './record-email-id.ts';
import type {
  SendEmailReceivedEinInput,
  SendEmailReceivedEinResult,
} from '../core/workflows/send-email-received-ein.input.ts';
import { forCallersCompany, runCaller } from './caller.ts';
import { sendOrMarkFailed } from './give-up.ts';
import { emailStepOptions } from './retry-policy.ts';
import { audienceOf, reportsOutcome, type OutcomeReport } from './report-outcome.ts';

/** The send step, dispatched in its company's turn (caller.ts). */
const emailStep = () => proxyActivities<Activities>(forCallersCompany(emailStepOptions()));

/**
 * send-email-received-ein: one step, the notification chosen by `emailAction`
 * (core/workflows/ein-actions.ts) sent to `recipients` (cc `ccs`) on behalf of
 * the company, organization and user named in the input.
 */
async function sendEmailReceivedEinRun(
  report: OutcomeReport,
  input: SendEmailReceivedEinInput,
): Promise<SendEmailReceivedEinResult> {
  const idempotencyKey = `${workflowInfo().workflowId}:ein-email`;
  const caller = runCaller();
  // Its last step is the send, which also says whether anyone hears the run's completion.
  const sent = await sendOrMarkFailed(idempotencyKey, () =>
    emailStep().deliverEinEmail(
      {
        idempotencyKey,
        emailAction: input.emailAction,
        recipients: input.recipients,
        ccs: input.ccs,
        recipientName: input.recipientName,
        resourceIdRef: input.resource_id_ref,
        caller: {
          companyId: input.companyId,
          organizationId: input.organizationId,
          userId: input.userId,
          // Triggered with a test-mode key: the email is a test send too.
          ...(caller.test ? { test: true } : {}),
        },
      },
      audienceOf(caller),
    ),
  );
  report.lastStepSaid(sent);
  recordEmailId(sent.emailId);
  return { message: 'ein email sent', emailAction: input.emailAction, emailId: sent.emailId };
}

/** The workflow as registered: its end is told to the company's webhook endpoints (report-outcome.ts). */
export const sendEmailReceivedEin = reportsOutcome('send-email-received-ein', sendEmailReceivedEinRun);
