import { isCancellation, proxyLocalActivities, rootCause } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import { DATABASE_LOCAL_STEP } from './retry-policy.ts';

const { markEmailFailed } = proxyLocalActivities<Activities>(DATABASE_LOCAL_STEP);

/**
 * Runs an email step; when it fails for good (retries exhausted or
 * non-retryable), finalises the email record as `failed` so it does not stay
 * `pending`, then rethrows so the run fails with the step's error.
 * A cancelled run is left alone: its send may still be completing.
 */
export async function sendOrMarkFailed<T>(idempotencyKey: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (!isCancellation(err)) await markEmailFailed(idempotencyKey, rootCause(err) ?? 'email step failed');
    throw err;
  }
}
