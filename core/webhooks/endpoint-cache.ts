import { LRUCache } from 'lru-cache';
import type { EndpointDoc, EndpointStore } from './endpoint-store.ts';

/**
 * How long a worker signs and posts with an endpoint as it read it: a change
 * made through another process (disabled, deleted, URL changed, secret
 * rotated) is seen by attempts at most this much later. A batch names the
 * endpoint's version its hand-over saw, so a change made through the process
 * that handed the events over is seen at once.
 */
export const ENDPOINT_CACHE_MS = 2000;

export interface EndpointCache {
  /** The endpoint, read at most once per ENDPOINT_CACHE_MS, or again when older than `version` (ms). */
  get(key: string, version?: number): Promise<EndpointDoc | null>;
  /** What this process just wrote (an attempt's failure count, a disable). */
  put(doc: EndpointDoc): void;
}

export function createEndpointCache(store: EndpointStore, ttlMs = ENDPOINT_CACHE_MS): EndpointCache {
  // Holds `{ doc }`: lru-cache keeps no null values, and a deleted endpoint is worth remembering too.
  const cache = new LRUCache<string, { doc: EndpointDoc | null }>({
    max: 10_000,
    ttl: ttlMs,
    fetchMethod: async (key) => ({ doc: await store.byKey(key) }),
  });
  return {
    async get(key, version) {
      const cached = cache.get(key);
      const stale =
        cached !== undefined &&
        version !== undefined &&
        cached.doc !== null &&
        cached.doc.updated_at.getTime() < version;
      const entry = await cache.fetch(key, stale ? { forceRefresh: true } : {});
      return entry?.doc ?? null;
    },
    put(doc) {
      cache.set(doc._id, { doc });
    },
  };
}
