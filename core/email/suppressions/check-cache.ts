import { LRUCache } from 'lru-cache';
import type { SuppressionReason } from '../email-schema.ts';

/**
 * How long this process answers a send's suppression check from what it read
 * before, per list and address. A suppression added or removed through this
 * process (the API, a provider event, a test-mode event) applies to its next
 * send at once; one added or removed through another replica or the worker
 * applies here within this time, as a revoked API key does (KEY_CACHE_TTL_MS).
 * A bounce's event arrives seconds after the send that caused it anyway.
 */
export const SUPPRESSION_CHECK_CACHE_MS = 2_000;

const MAX_ENTRIES = 50_000;

/** What a check found for one `_id` (`<list owner>/<address>`): its reason, or null (not suppressed). */
export type CheckedEntry = SuppressionReason | null;

export interface CheckCache {
  /** The cached answer for each id; undefined where it must be read. */
  get(id: string): CheckedEntry | undefined;
  /**
   * A reading's position: `fill` keeps what a read found only when no entry
   * changed in this process since the reading began, so a read racing an
   * add or a remove never caches the answer from before it.
   */
  begin(): number;
  fill(reading: number, id: string, entry: CheckedEntry): void;
  /** An entry was added or removed here: forget it, and any read in flight. */
  changed(id: string): void;
}

export function createCheckCache(ttlMs = SUPPRESSION_CHECK_CACHE_MS): CheckCache {
  // lru-cache stores no null/undefined values: "not suppressed" is kept as ''.
  const entries = new LRUCache<string, SuppressionReason | ''>({ max: MAX_ENTRIES, ttl: ttlMs });
  let changes = 0;
  return {
    get(id) {
      if (ttlMs <= 0) return undefined;
      const cached = entries.get(id);
      return cached === undefined ? undefined : cached || null;
    },
    begin: () => changes,
    fill(reading, id, entry) {
      if (ttlMs > 0 && reading === changes) entries.set(id, entry ?? '');
    },
    changed(id) {
      changes += 1;
      entries.delete(id);
    },
  };
}
