import { CancellationScope, proxyActivities, proxyLocalActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type {
  SendWelcomeEmailInput,
  SendWelcomeEmailResult,
} from '../core/workflows/send-welcome-email.input.ts';
import { forCallersCompany, runCaller } from './caller.ts';
import { sendOrMarkFailed } from './give-up.ts';
import { recordEmailId } from './record-email-id.ts';
import { DATABASE_LOCAL_STEP, emailStepOptions } from './retry-policy.ts';
import { audienceOf, reportsOutcome, type OutcomeReport } from './report-outcome.ts';

const { claimUserWelcomeEmail, releaseWelcomeEmail, markWelcomeEmailSent, readWelcomeUser } =
  proxyLocalActivities<Activities>(DATABASE_LOCAL_STEP);
/** The send step, dispatched in its company's turn (caller.ts). */
const emailStep = () => proxyActivities<Activities>(forCallersCompany(emailStepOptions()));

/** Why a run sends nothing: the flag is set, or another run holds the claim. */
const NOT_CLAIMED = {
  'already-sent': 'welcome email already sent',
  'in-progress': 'welcome email already in progress',
} as const;

/**
 * send-welcome-email: fetch the user; send `welcome` unless the user's
 * `welcomeEmailSent` flag is already set; set the flag.
 * An unknown user fails the run with `user not found: <id>` (not retried),
 * and so does a user whose document names another company than the run's
 * caller's (activities/users.ts reachableBy).
 * Before sending, the run claims the email on the user document, so two runs
 * for the same user started together send one email between them; the claim
 * carries the user's send key, so no later run sends it twice either
 * (docs/workflows.md says why a claim and not a workflow id per user).
 *
 * Steps: claim the user's welcome email, reading the user in the same write
 * (local activity) → send (normal activity: it talks to the provider and may
 * take long) → set the flag (local activity). A send that fails for good or
 * is cancelled releases the claim (local activity).
 */
async function sendWelcomeEmailRun(
  report: OutcomeReport,
  input: SendWelcomeEmailInput,
): Promise<SendWelcomeEmailResult> {
  const { workflowId } = workflowInfo();
  const caller = runCaller();
  // The user must be the caller's company's (or name no company): another
  // company's user is `user not found`, exactly like an unknown one.
  const companyId = caller.companyId;
  if (caller.test === true) return sendTestWelcome(input, caller);
  const claimed = await claimUserWelcomeEmail(input.userId, workflowId, companyId);
  if (claimed.claim !== 'claimed') return { message: NOT_CLAIMED[claimed.claim], userId: input.userId };

  // The user's welcome send key, handed over with the claim: a run taking over
  // an abandoned claim sends under the key of the run before it, so a send
  // that went out (or may have) is answered from its record, never repeated.
  // Stable across retries and replays.
  const { idempotencyKey } = claimed;
  let sent;
  try {
    sent = await sendOrMarkFailed(idempotencyKey, () =>
      emailStep().deliverWelcomeEmail({
        idempotencyKey,
        userId: input.userId,
        email: claimed.email,
        name: claimed.name,
        caller,
      }),
    );
  } catch (err) {
    // Failed or cancelled: a later run may try again. Runs even when this one is being cancelled.
    await CancellationScope.nonCancellable(() => releaseWelcomeEmail(input.userId, workflowId));
    throw err;
  }
  recordEmailId(sent.emailId);
  // The last step also says whether anyone hears the run's completion (report-outcome.ts).
  // The email is sent: a cancel arriving now does not stop the flag (the run completes).
  report.lastStepSaid(
    await CancellationScope.nonCancellable(() =>
      markWelcomeEmailSent(input.userId, companyId, audienceOf(caller)),
    ),
  );
  return { message: 'welcome email sent', userId: input.userId, emailId: sent.emailId };
}

/**
 * A test-mode run (a test key triggered it): the welcome email in test mode
 * (recorded, never at a provider), under this run's own key, and the user's
 * welcome fields (claim, flag, send key) left alone: they are live data, and
 * a test run must not use up the user's one live welcome email. So every test
 * run sends a test email (docs/test-mode.md).
 */
async function sendTestWelcome(
  input: SendWelcomeEmailInput,
  caller: ReturnType<typeof runCaller>,
): Promise<SendWelcomeEmailResult> {
  const user = await readWelcomeUser(input.userId, caller.companyId);
  const idempotencyKey = `${workflowInfo().workflowId}:welcome-email`;
  const sent = await sendOrMarkFailed(idempotencyKey, () =>
    emailStep().deliverWelcomeEmail({
      idempotencyKey,
      userId: input.userId,
      email: user.email,
      name: user.name,
      caller,
    }),
  );
  recordEmailId(sent.emailId);
  return { message: 'welcome email sent', userId: input.userId, emailId: sent.emailId };
}

/** The workflow as registered: its end is told to the company's webhook endpoints (report-outcome.ts). */
export const sendWelcomeEmail = reportsOutcome('send-welcome-email', sendWelcomeEmailRun);
