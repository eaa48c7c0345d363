import type { StepSendKeys } from '../idempotency/step-send-keys.ts';

/** Longer than calling a send off takes; released at once (a crashed caller's lease just expires). */
const CALL_OFF_LEASE_MS = 30_000;

/**
 * Runs `callOff` holding a send key's attempt lease (step-send-keys.ts), the
 * lease a send attempt must hold to call the provider: while `callOff` runs
 * no attempt can start, and when an attempt holds the lease now the answer is
 * `sending` and `callOff` does not run. So a send and whatever calls it off
 * (a cancelled scheduled email, a cancelled workflow run) never both happen.
 */
export async function underSendLease<T>(
  keys: StepSendKeys,
  key: string,
  callOff: () => Promise<T>,
): Promise<T | 'sending'> {
  if (!(await keys.claimAttempt(key, new Date(Date.now() + CALL_OFF_LEASE_MS)))) return 'sending';
  try {
    return await callOff();
  } finally {
    await keys.releaseAttempt(key);
  }
}
