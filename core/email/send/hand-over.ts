import type { OutgoingMail } from './provider.ts';

/**
 * The moment a message is handed to a provider, after any wait for that
 * provider's rate (rate-gate.ts). The send pipeline marks its record with the
 * attempt there (send-pipeline.ts), not before the wait: a process killed
 * while it waits for a slot leaves no mark, so the retry knows nothing reached
 * a provider and sends, where a mark would make it wait for the provider's
 * events and give the email up as "outcome unknown" (send-claim.ts).
 */

/** `beforeHandOver` failed: nothing was handed over; not the provider's failure (no failover, no breaker count). */
export class HandOverFailed extends Error {
  constructor(readonly reason: unknown) {
    super(`before hand-over: ${(reason as Error)?.message ?? String(reason)}`, { cause: reason });
  }
}

/** Runs the mail's `beforeHandOver`, its failure wrapped in HandOverFailed. */
export async function handOver(mail: OutgoingMail): Promise<void> {
  if (!mail.beforeHandOver) return;
  try {
    await mail.beforeHandOver();
  } catch (err) {
    throw new HandOverFailed(err);
  }
}
