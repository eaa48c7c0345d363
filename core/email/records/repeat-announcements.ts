import { LRUCache } from 'lru-cache';

/**
 * How often the pixel's opens and the tracked links' clicks of one email are
 * announced (`email.opened`, `email.clicked` to webhook endpoints): the
 * first at once, then at most one of each kind per email per interval, per
 * gateway process. The record still takes every open (its time). Anyone
 * holding one email can load its pixel in a loop; coalesced per flush
 * (500 ms) that was up to 7,200 deliveries an hour to its company's
 * endpoints, all saying the same thing. A provider's own open and click
 * events (SendGrid's Event Webhook) and POST /api/email/track, which has its
 * own bound, are announced each.
 */
export const REPEAT_ANNOUNCE_INTERVAL_MS = 60_000;
/** Emails remembered at once; past that the least recently announced are forgotten (announced again). */
const REMEMBERED = 100_000;

export interface RepeatAnnouncements {
  /** Whether a change of `kind` for `emailId` is due to be announced now. */
  due(kind: string, emailId: string): boolean;
  /** Notes that it was (once its write succeeded: a failed write announces nothing, its retry does). */
  announced(kind: string, emailId: string): void;
}

export function repeatAnnouncements(intervalMs = REPEAT_ANNOUNCE_INTERVAL_MS): RepeatAnnouncements {
  const recent = new LRUCache<string, true>({ max: REMEMBERED, ttl: intervalMs, ttlAutopurge: false });
  return {
    due: (kind, emailId) => !recent.has(`${kind} ${emailId}`),
    announced: (kind, emailId) => void recent.set(`${kind} ${emailId}`, true),
  };
}
