import type { Config } from '../config.ts';
import type { BatchedAttempt } from './delivery-workflow.ts';
import type { AttemptOutcome, DeliveryStore } from './delivery-store.ts';
import type { EndpointCache } from './endpoint-cache.ts';
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
  /** The endpoints as this worker read them lately (endpoint-cache.ts). */
  endpointCache: EndpointCache;
  /** Writes an attempt's result (grouped with concurrent attempts' into one bulk write). */
  noteAttempt: (key: string, outcome: AttemptOutcome) => Promise<void>;
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
 * One attempt of a delivery by its key alone (a replay, or an event handed
 * over again): reads the delivery for its body; one that ended is not sent again.
 */
export async function attemptDelivery(
  deps: AttemptDeps,
  deliveryKey: string,
  attempt: number,
): Promise<AttemptResult> {
  const delivery = await deps.deliveries.get(deliveryKey);
  if (!delivery) return { outcome: 'gone', why: 'delivery not found' };
  if (delivery.status === 'delivered') return { outcome: 'delivered' };
  if (delivery.status === 'failed') return { outcome: 'gone', why: delivery.last_error ?? 'delivery failed' };
  return attemptBatched(
    deps,
    {
      deliveryKey,
      eventId: delivery.event_id,
      payload: delivery.payload,
      endpointKey: delivery.endpoint_key,
      endpointVersion: 0,
      attemptsBefore: 0,
    },
    attempt,
  );
}

/**
 * One attempt (`attempt`: 1 for the first): sign with the endpoint's current
 * secrets, POST, and write down what happened: one write for the delivery,
 * plus one on the endpoint after a failure (failures in a row may disable
 * it) or after the first 2xx following failures.
 */
export async function attemptBatched(
  deps: AttemptDeps,
  item: BatchedAttempt,
  attempt: number,
): Promise<AttemptResult> {
  const endpoint = await deps.endpointCache.get(item.endpointKey, item.endpointVersion);
  if (!endpoint) return { outcome: 'gone', why: 'endpoint deleted' };
  if (!endpoint.enabled) return { outcome: 'gone', why: endpoint.disabled_reason ?? 'endpoint disabled' };

  const headers = signedHeaders(item.eventId, item.payload, signingSecrets(endpoint));
  const result = await deps.post(endpoint.url, item.payload, headers);
  const ok = result.error === null;
  const { retryInitialSeconds, retryMaxSeconds } = deps.config.webhooks;
  const next = ok
    ? null
    : new Date(
        Date.now() +
          retryDelaySeconds(attempt, { initialSeconds: retryInitialSeconds, maxSeconds: retryMaxSeconds }) *
            1000,
      );
  await deps.noteAttempt(item.deliveryKey, {
    ok,
    responseCode: result.status,
    error: result.error,
    nextAttemptAt: next,
  });
  if (!ok) {
    const after = await deps.endpoints.noteAttempt(
      endpoint._id,
      false,
      result.error ?? '',
      deps.config.webhooks.disableAfterFailedAttempts,
    );
    // This worker's next attempts see the count and a disable at once.
    if (after) deps.endpointCache.put(after);
  } else if (endpoint.failed_attempts > 0) {
    // A success on an endpoint with no failures to forget writes nothing.
    await deps.endpoints.noteAttempt(endpoint._id, true, '', deps.config.webhooks.disableAfterFailedAttempts);
    deps.endpointCache.put({ ...endpoint, failed_attempts: 0 });
  }
  return ok ? { outcome: 'delivered' } : { outcome: 'retry', why: result.error ?? 'failed' };
}
