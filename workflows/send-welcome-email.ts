import {
  CancellationScope,
  patched,
  proxyActivities,
  proxyLocalActivities,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import { recordEmailId } from './search-attributes.ts';
import type { WelcomeEmailClaim, WelcomeEmailClaimStatus } from '../activities/users.ts';
import type {
  SendWelcomeEmailInput,
  SendWelcomeEmailResult,
} from '../core/workflows/send-welcome-email.input.ts';
import { runCaller } from './caller.ts';
import { sendOrMarkFailed } from './give-up.ts';
import { DATABASE_LOCAL_STEP, DATABASE_STEP, EMAIL_STEP } from './retry-policy.ts';

/** The database steps as normal activities: what runs started before WELCOME_LOCAL_STEPS replay. */
const scheduled = proxyActivities<Activities>(DATABASE_STEP);
/** The database steps as local activities (workflows/retry-policy.ts DATABASE_LOCAL_STEP). */
const local = proxyLocalActivities<Activities>(DATABASE_LOCAL_STEP);
const { deliverWelcomeEmail } = proxyActivities<Activities>(EMAIL_STEP);

/**
 * The patch that made the database steps local activities and merged the user
 * read into the claim (one step, `claimUserWelcomeEmail`). Runs recorded
 * before it (getUser, claimWelcomeEmail, … as normal activities) replay the
 * old path; every new run takes the new one.
 */
export const WELCOME_LOCAL_STEPS = 'welcome-email-local-steps';

const ALREADY_SENT = 'welcome email already sent';
const IN_PROGRESS = 'welcome email already in progress';

/**
 * send-welcome-email: fetch the user; send `welcome` unless the user's
 * `welcomeEmailSent` flag is already set; set the flag.
 * An unknown user fails the run with `user not found: <id>` (not retried),
 * and so does a user whose document names another company than the run's
 * caller's (activities/users.ts reachableBy).
 * Before sending, the run claims the email on the user document, so two runs
 * for the same user started together send one email between them; the claim
 * carries the user's send key, so no later run sends it twice either.
 *
 * Steps: claim the user's welcome email, reading the user in the same write
 * (local activity) → send (normal activity: it talks to the provider and may
 * take long) → set the flag (local activity). A send that fails for good or
 * is cancelled releases the claim (local activity).
 */
export async function sendWelcomeEmail(input: SendWelcomeEmailInput): Promise<SendWelcomeEmailResult> {
  const { workflowId } = workflowInfo();
  const localSteps = patched(WELCOME_LOCAL_STEPS);
  const db = localSteps ? local : scheduled;
  const caller = runCaller();
  // The user must be the caller's company's (or name no company): another
  // company's user is `user not found`, exactly like an unknown one.
  const companyId = caller.companyId;

  let recipient: { email: string; name: string | null };
  let idempotencyKey: string;
  if (localSteps) {
    const claimed = await local.claimUserWelcomeEmail(input.userId, workflowId, companyId);
    if (claimed.claim !== 'claimed')
      return { message: claimed.claim === 'already-sent' ? ALREADY_SENT : IN_PROGRESS, userId: input.userId };
    recipient = { email: claimed.email, name: claimed.name };
    idempotencyKey = claimed.idempotencyKey;
  } else {
    const user = await scheduled.getUser(input.userId, companyId);
    if (user.welcomeEmailSent) return { message: ALREADY_SENT, userId: input.userId };
    // Histories recorded before the claim carried a key hold a bare status string.
    const claimed = (await scheduled.claimWelcomeEmail(input.userId, workflowId, companyId)) as
      WelcomeEmailClaim | WelcomeEmailClaimStatus;
    const claim = typeof claimed === 'string' ? claimed : claimed.claim;
    if (claim === 'already-sent') return { message: ALREADY_SENT, userId: input.userId };
    if (claim === 'in-progress') return { message: IN_PROGRESS, userId: input.userId };
    recipient = { email: user.email, name: user.name };
    idempotencyKey =
      typeof claimed === 'object' && 'idempotencyKey' in claimed
        ? claimed.idempotencyKey
        : `${workflowId}:welcome-email`;
  }

  // The user's welcome send key, handed over with the claim: a run taking over
  // an abandoned claim sends under the key of the run before it, so a send
  // that went out (or may have) is answered from its record, never repeated.
  // Stable across retries and replays.
  let sent;
  try {
    sent = await sendOrMarkFailed(idempotencyKey, () =>
      deliverWelcomeEmail({
        idempotencyKey,
        userId: input.userId,
        email: recipient.email,
        name: recipient.name,
        caller,
      }),
    );
  } catch (err) {
    // Failed or cancelled: a later run may try again. Runs even when this one is being cancelled.
    await CancellationScope.nonCancellable(() => db.releaseWelcomeEmail(input.userId, workflowId));
    throw err;
  }

  recordEmailId(sent.emailId);
  await db.markWelcomeEmailSent(input.userId, companyId);
  return { message: 'welcome email sent', userId: input.userId, emailId: sent.emailId };
}
