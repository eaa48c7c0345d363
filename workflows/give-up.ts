import {
  CancellationScope,
  CancelledFailure,
  isCancellation,
  proxyLocalActivities,
  rootCause,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import { DATABASE_LOCAL_STEP } from './retry-policy.ts';

const { markEmailFailed, callOffEmail } = proxyLocalActivities<Activities>(DATABASE_LOCAL_STEP);

/**
 * Runs an email step; when it fails for good (retries exhausted or
 * non-retryable), finalises the email record as `failed` so it does not stay
 * `pending`, then rethrows so the run fails with the step's error.
 * When the run is cancelled, the email is called off, in a scope the
 * cancellation does not reach: a record still pending that no attempt is
 * sending ends `failed` at once (the step was waiting to retry); one an
 * attempt is sending is left to it (core/email/send/step-call-off.ts).
 * An attempt at the provider when the cancel came is waited for
 * (retry-policy.ts emailStepOptions); if it failed, Temporal does not retry
 * it and reports its failure, not a cancellation: the run was still
 * cancelled, so the email is called off and the run ends `cancelled`.
 */
export async function sendOrMarkFailed<T>(idempotencyKey: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (!isCancellation(err) && !CancellationScope.current().consideredCancelled) {
      await markEmailFailed(idempotencyKey, rootCause(err) ?? 'email step failed');
      throw err;
    }
    await CancellationScope.nonCancellable(() => callOffEmail(idempotencyKey));
    if (isCancellation(err)) throw err;
    throw new CancelledFailure('workflow run cancelled; its email step failed meanwhile', [], err as Error);
  }
}
