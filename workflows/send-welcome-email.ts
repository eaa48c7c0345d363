import { CancellationScope, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import { recordEmailId } from './search-attributes.ts';
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
 * for the same user started together send one email between them.
 */
export async function sendWelcomeEmail(input: SendWelcomeEmailInput): Promise<SendWelcomeEmailResult> {
  const user = await getUser(input.userId);
  if (user.welcomeEmailSent) {
    return { message: 'welcome email already sent', userId: input.userId };
  }

  const { workflowId } = workflowInfo();
  const claim = await claimWelcomeEmail(input.userId, workflowId);
  if (claim === 'already-sent') return { message: 'welcome email already sent', userId: input.userId };
  if (claim === 'in-progress') return { message: 'welcome email already in progress', userId: input.userId };

  // Stable across retries and replays, unique per run (workflow ids are never reused).
  const idempotencyKey = `${workflowId}:welcome-email`;
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
