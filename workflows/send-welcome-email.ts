import { CancellationScope, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import { recordEmailId } from './search-attributes.ts';
import type { WelcomeEmailClaim, WelcomeEmailClaimStatus } from '../activities/users.ts';
import type {
  SendWelcomeEmailInput,
  SendWelcomeEmailResult,
} from '../core/workflows/send-welcome-email.input.ts';
import { runCaller } from './caller.ts';
import { sendOrMarkFailed } from './give-up.ts';
import { DATABASE_STEP, EMAIL_STEP } from './retry-policy.ts';

const { getUser, claimWelcomeEmail, releaseWelcomeEmail, markWelcomeEmailSent } =
  proxyActivities<Activities>(DATABASE_STEP);
const { deliverWelcomeEmail } = proxyActivities<Activities>(EMAIL_STEP);

/**
 * send-welcome-email: fetch the user; send `welcome` unless the user's
 * `welcomeEmailSent` flag is already set; set the flag.
 * An unknown user fails the run with `user not found: <id>` (not retried).
 * Before sending, the run claims the email on the user document, so two runs
 * for the same user started together send one email between them; the claim
 * carries the user's send key, so no later run sends it twice either.
 */
export async function sendWelcomeEmail(input: SendWelcomeEmailInput): Promise<SendWelcomeEmailResult> {
  const user = await getUser(input.userId);
  if (user.welcomeEmailSent) {
    return { message: 'welcome email already sent', userId: input.userId };
  }

  const { workflowId } = workflowInfo();
  // Histories recorded before the claim carried a key hold a bare status string.
  const claimed = (await claimWelcomeEmail(input.userId, workflowId)) as
    WelcomeEmailClaim | WelcomeEmailClaimStatus;
  const claim = typeof claimed === 'string' ? claimed : claimed.claim;
  if (claim === 'already-sent') return { message: 'welcome email already sent', userId: input.userId };
  if (claim === 'in-progress') return { message: 'welcome email already in progress', userId: input.userId };

  // The user's welcome send key, handed over with the claim: a run taking over
  // an abandoned claim sends under the key of the run before it, so a send
  // that went out (or may have) is answered from its record, never repeated.
  // Stable across retries and replays.
  const idempotencyKey =
    typeof claimed === 'object' && 'idempotencyKey' in claimed
      ? claimed.idempotencyKey
      : `${workflowId}:welcome-email`;
  let sent;
  try {
    sent = await sendOrMarkFailed(idempotencyKey, () =>
      deliverWelcomeEmail({
        idempotencyKey,
        userId: input.userId,
        email: user.email,
        name: user.name,
        caller: runCaller(),
      }),
    );
  } catch (err) {
    // Failed or cancelled: a later run may try again. Runs even when this one is being cancelled.
    await CancellationScope.nonCancellable(() => releaseWelcomeEmail(input.userId, workflowId));
    throw err;
  }

  recordEmailId(sent.emailId);
  await markWelcomeEmailSent(input.userId);
  return { message: 'welcome email sent', userId: input.userId, emailId: sent.emailId };
}
