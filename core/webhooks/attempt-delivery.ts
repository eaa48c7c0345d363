import type { Config } from '../config.ts';
import type { DeliveryStore } from './delivery-store.ts';
import { signingSecrets, type EndpointStore } from './endpoint-store.ts';
import { signedHeaders, type PostResult } from './post-webhook.ts';

export type AttemptResult =
  | { outcome: 'delivered' }
  /** Retried by the run's retry policy. */
  | { outcome: 'retry'; why: string }
  /** Not retried: the delivery or its endpoint is gone, or the endpoint is disabled. */
  | { outcome: 'gone'; why: string };

export interface AttemptDeps {
  deliveries: DeliveryStore;
  endpoints: EndpointStore;
  post: (url: string, body: string, headers: Record<string, string>) => Promise<PostResult>;
  config: Pick<Config, 'webhooks'>;
}

/**
 * The delay before attempt `attempt + 1`: what the run's retry policy waits
 * (initial × 2^(attempt−1), at most the maximum), so `next_attempt_at` says
 * when Temporal will try again.
 */
export function retryDelaySeconds(
  attempt: number,
  retry: { initialSeconds: number; maxSeconds: number },
): number {
  return Math.min(retry.initialSeconds * 2 ** (attempt - 1), retry.maxSeconds);
}

/**
 * One attempt of one delivery (`attempt`: 1 for the first): sign with the
 * endpoint's current secrets, POST, and write down what happened on the
 * delivery and the endpoint (whose failures in a row may disable it).
 */
export async function attemptDelivery(
  deps: AttemptDeps,
  deliveryKey: string,
  attempt: number,
): Promise<AttemptResult> {
  const delivery = await deps.deliveries.get(deliveryKey);
  if (!delivery) return { outcome: 'gone', why: 'delivery not found' };
  if (delivery.status === 'delivered') return { outcome: 'delivered' };
  const endpoint = await deps.endpoints.byKey(delivery.endpoint_key);
  if (!endpoint) return { outcome: 'gone', why: 'endpoint deleted' };
  if (!endpoint.enabled) return { outcome: 'gone', why: endpoint.disabled_reason ?? 'endpoint disabled' };

  const headers = signedHeaders(delivery.event_id, delivery.payload, signingSecrets(endpoint));
  const result = await deps.post(endpoint.url, delivery.payload, headers);
  const ok = result.error === null;
  const { retryInitialSeconds, retryMaxSeconds } = deps.config.webhooks;
  const next = ok
    ? null
    : new Date(
        Date.now() +
          retryDelaySeconds(attempt, { initialSeconds: retryInitialSeconds, maxSeconds: retryMaxSeconds }) *
            1000,
      );
  await deps.deliveries.noteAttempt(deliveryKey, {
    ok,
    responseCode: result.status,
    error: result.error,
    nextAttemptAt: next,
  });
  // A success on an endpoint with no failures to forget writes nothing.
  if (!ok || endpoint.failed_attempts > 0)
    await deps.endpoints.noteAttempt(
      endpoint._id,
      ok,
      result.error ?? '',
      deps.config.webhooks.disableAfterFailedAttempts,
    );
  return ok ? { outcome: 'delivered' } : { outcome: 'retry', why: result.error ?? 'failed' };
}
