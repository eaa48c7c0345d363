import { handOver } from '../hand-over.ts';
import type { MailProvider } from '../provider.ts';
import type { ProviderRate } from './provider-rate.ts';

/**
 * How long one send waits for its provider's rate before it is refused there
 * (then the next provider is tried, or the caller gets 429 with Retry-After,
 * or the workflow step is retried after that wait). Short: an HTTP caller is
 * waiting. A bulk's items wait longer (BULK_RATE_WAIT_MS): pacing is the point.
 */
export const SEND_RATE_WAIT_MS = 2_000;

/** Bulk items in flight (bulk.ts: 10) each wait at most this: enough at any rate ≥ 1/s. */
export const BULK_RATE_WAIT_MS = 30_000;

/**
 * `provider`, handed a message only once its rate has a slot for it; the
 * mail's `beforeHandOver` runs after the wait (hand-over.ts).
 */
export function withRate(provider: MailProvider, rate: ProviderRate): MailProvider {
  return {
    name: provider.name,
    waitsForRate: true,
    async send(mail) {
      await rate.take(mail.rateWaitMs ?? SEND_RATE_WAIT_MS);
      await handOver(mail);
      return provider.send(mail);
    },
  };
}
