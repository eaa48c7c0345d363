import {
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  rootCause,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import { DATABASE_LOCAL_STEP, DATABASE_STEP } from './retry-policy.ts';

const scheduled = proxyActivities<Activities>(DATABASE_STEP);
const local = proxyLocalActivities<Activities>(DATABASE_LOCAL_STEP);

/**
 * The patch that made markEmailFailed a local activity. Runs that reached
 * this step before it replay it as the normal activity they recorded.
 */
export const MARK_FAILED_LOCAL_STEP = 'mark-email-failed-local-step';

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
    if (!isCancellation(err)) {
      const { markEmailFailed } = patched(MARK_FAILED_LOCAL_STEP) ? local : scheduled;
      await markEmailFailed(idempotencyKey, rootCause(err) ?? 'email step failed');
    }
    throw err;
  }
}
