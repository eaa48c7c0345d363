import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { MailroomError } from '../../errors.ts';
import { parse } from '../../validation.ts';
import {
  EMAIL_NOT_FOUND,
  TOO_MANY_EVENTS,
  describeBodyProblem,
  invalidEventType,
} from '../email-messages.ts';
import type { RecordStore } from '../records/record-store.ts';
import { TRACK_EVENT_TYPES, TrackBodySchema } from '../email-schema.ts';
import { looksLikeViewKey } from './view-key.ts';

/**
 * Opens and events reported through the tracking endpoints (no auth headers:
 * the unguessable view key is the credential).
 *
 * delivered → `delivered` flag, status delivered if not already further on;
 * opened    → `opened` flag, `time` = now, status opened if allowed;
 * clicked   → `clicked` flag and counts as an open.
 * Repeats are harmless: the same flags are set again, the status cannot move back.
 *
 * Pixel opens go through the open buffer (open-buffer.ts, record-store.ts
 * `applyOpens`), written in batches. A key of the wrong shape is not looked up; a well-formed one is one read by
 * `_id` (the key embeds the email id) and a constant-time comparison with the
 * stored key (record-store.ts, view-key.ts). Either way an unknown key is "not found".
 */

/**
 * Events one view key may report per minute through POST /api/email/track,
 * per gateway. Anyone holding an email holds its key, and each event may be a
 * signed webhook delivery to the company's endpoints: unbounded, one forwarded
 * email was a way to flood them (3,287 deliveries in 30 s, measured) or get a
 * briefly failing endpoint disabled. Far above what a product reports.
 */
export const TRACK_EVENTS_PER_KEY_PER_MINUTE = 30;

/** The per-key bound of POST /api/email/track, one per email service (gateway). */
export const createTrackLimiter = () =>
  new RateLimiterMemory({ points: TRACK_EVENTS_PER_KEY_PER_MINUTE, duration: 60 });

/** POST /api/email/track. */
export async function recordEvent(
  records: RecordStore,
  raw: unknown,
  limiter: RateLimiterMemory,
): Promise<void> {
  const body = parse(TrackBodySchema, raw, (problem) =>
    problem.kind === 'invalid' && problem.field === 'event_type'
      ? invalidEventType(TRACK_EVENT_TYPES)
      : describeBodyProblem(problem),
  );
  try {
    await limiter.consume(body.view_key);
  } catch (refused) {
    if (!(refused instanceof RateLimiterRes)) throw refused;
    throw new MailroomError('rate_limited', TOO_MANY_EVENTS, {
      retryAfterSeconds: refused.msBeforeNext / 1000,
    });
  }
  const event = body.event_type;
  const applied =
    looksLikeViewKey(body.view_key) && (await records.applyEvent({ view_key: body.view_key }, event));
  if (!applied) throw new MailroomError('not_found', EMAIL_NOT_FOUND);
}
