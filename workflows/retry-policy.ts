import type { ActivityOptions } from '@temporalio/workflow';

/**
 * How activities retry. Transient failures back off
 * 1s, 2s, 4s, … capped at 30s, at most 8 attempts and never longer than
 * 5 minutes in total, after which the run fails with the last error.
 * Non-retryable failures (activities/failures.ts) skip all of this.
 */
export const RETRY = {
  initialInterval: '1s',
  backoffCoefficient: 2,
  maximumInterval: '30s',
  maximumAttempts: 8,
} as const;

/** Database steps: quick, so a hung call is abandoned and retried fast. */
export const DATABASE_STEP: ActivityOptions = {
  startToCloseTimeout: '10s',
  scheduleToCloseTimeout: '5m',
  retry: RETRY,
};

/**
 * Email steps: the provider call may take a while (startToClose 30s), but the
 * activity heartbeats every 2s, so a worker that dies mid-send is detected
 * after 10s and the step retried elsewhere. The retry carries the same
 * idempotency key, so it never sends a second email.
 */
export const EMAIL_STEP: ActivityOptions = {
  startToCloseTimeout: '30s',
  heartbeatTimeout: '10s',
  scheduleToCloseTimeout: '5m',
  retry: RETRY,
};
