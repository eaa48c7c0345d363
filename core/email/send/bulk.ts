import pLimit from 'p-limit';
import { MailroomError, isMailroomError } from '../../errors.ts';
import { takeTurn } from '../../event-loop-turns.ts';
import type { Logger } from '../../logger.ts';
import { assertWellFormed } from '../auth.ts';
import { isComplete, UNAUTHORIZED, type Principal } from '../../identity.ts';
import { isPlainObject, parse } from '../../validation.ts';
import {
  BODY_NOT_OBJECT,
  BULK_ITEM_NOT_OBJECT,
  DAILY_LIMIT_REACHED,
  TOO_MANY_EMAILS,
  describeBodyProblem,
  invalidField,
  missingRequiredFields,
} from '../email-messages.ts';
import {
  BULK_BATCH_SIZE,
  BULK_DELAY_DEFAULT_MS,
  BulkBodySchema,
  MAX_BULK_EMAILS,
  type BulkBody,
  type BulkItemResult,
  type BulkResult,
  type ScheduledResult,
  type SendResult,
} from '../email-schema.ts';

/**
 * POST /api/email/bulk: who may send it is settled first (authorizeBulk); the
 * envelope is checked as a whole (a bad envelope is one 400); each item is
 * then validated, authorised and sent on its own, so one bad item fails alone
 * in `results[].error`. Items go in batches of 50 with `batchDelay` ms
 * between batches; inside a batch a few are sent at once.
 */

/**
 * Sends inside one batch that may be in flight together. As many as one
 * group-committed write of records carries (record-batches.ts), so a bulk's
 * sends share their database commands the way concurrent requests do
 * (measured: 10 at once 6.1–6.7 bulks of 100 a second, 25 at once 7.7–8.2).
 * The provider's rate is bounded on its own (quotas/rate-gate.ts).
 */
export const BULK_CONCURRENCY = 25;

type SendOne = (body: unknown, principal: Principal) => Promise<SendResult | ScheduledResult>;

export interface BulkDeps {
  send: SendOne;
  /** Whether an item's template needs an authenticated caller (true for none or an unknown one). */
  requiresAuth: (item: unknown) => boolean;
  logger: Logger;
  sleep?: (ms: number) => Promise<void>;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function checkEnvelope(body: unknown): BulkBody {
  if (!isPlainObject(body)) throw new MailroomError('validation', BODY_NOT_OBJECT);
  const emails = body['emails'];
  if (emails === undefined || emails === null || (Array.isArray(emails) && emails.length === 0))
    throw new MailroomError('validation', missingRequiredFields(['emails']));
  if (Array.isArray(emails) && emails.length > MAX_BULK_EMAILS)
    throw new MailroomError('validation', TOO_MANY_EMAILS);
  return parse(BulkBodySchema, body, describeBodyProblem);
}

/**
 * Bulk needs what send needs: an authenticated caller with all three
 * identity ids, except for the signup templates. So an unauthenticated bulk
 * passes only when every item is a signup template; each is then narrowed and
 * counted against the per-recipient and per-client limits exactly as a single
 * send of it would be (the send authorises each item again), so a bulk
 * reaches no further than the same sends one by one. Anything else → 401
 * before a word about the body (a malformed identity header too).
 */
function authorizeBulk(deps: BulkDeps, principal: Principal, raw: unknown): void {
  const identity = assertWellFormed(principal.caller);
  if (principal.authenticated && isComplete(identity)) return;
  // An unauthenticated body is at most 64 KB (api/middleware/json-body.ts): this walk is bounded.
  const emails = isPlainObject(raw) ? raw['emails'] : undefined;
  const signupOnly =
    Array.isArray(emails) && emails.length > 0 && emails.every((item) => !deps.requiresAuth(item));
  if (!signupOnly) throw new MailroomError('unauthorized', UNAUTHORIZED);
}

export async function sendBulk(deps: BulkDeps, raw: unknown, principal: Principal): Promise<BulkResult> {
  authorizeBulk(deps, principal, raw);
  const body = checkEnvelope(raw);
  const sleep = deps.sleep ?? defaultSleep;
  const delay = body.batchDelay ?? BULK_DELAY_DEFAULT_MS;

  /** Items refused for the company's daily limit, and the longest wait any was told. */
  const overLimit = { items: 0, retryAfterSeconds: 0 };
  const sendItem = async (item: unknown): Promise<BulkItemResult> => {
    const rawId = isPlainObject(item) ? item['id'] : undefined;
    const id = typeof rawId === 'string' ? rawId : undefined;
    const withId = (r: Omit<BulkItemResult, 'id'>): BulkItemResult => (id === undefined ? r : { id, ...r });
    try {
      if (rawId !== undefined && id === undefined)
        throw new MailroomError('validation', invalidField('id', 'must be a string'));
      // Said of the item, not of the request body the send would call it.
      if (!isPlainObject(item)) throw new MailroomError('validation', BULK_ITEM_NOT_OBJECT);
      const rest = Object.fromEntries(Object.entries(item).filter(([k]) => k !== 'id'));
      // An item is validated and rendered on the event loop: items share it with other requests.
      await takeTurn();
      const sent = await deps.send(rest, principal);
      return withId({
        success: true,
        email_id: sent.email_id,
        ...('suppressed' in sent && sent.suppressed ? { suppressed: sent.suppressed } : {}),
        ...('scheduled' in sent ? { scheduled: true as const, send_at: sent.send_at } : {}),
        ...(sent.test ? { test: true as const } : {}),
      });
    } catch (err) {
      if (!isMailroomError(err)) deps.logger.error({ err }, 'bulk item failed unexpectedly');
      else if (err.message === DAILY_LIMIT_REACHED) {
        overLimit.items++;
        overLimit.retryAfterSeconds = Math.max(overLimit.retryAfterSeconds, err.retryAfterSeconds ?? 0);
      }
      return withId({ success: false, error: isMailroomError(err) ? err.message : 'internal error' });
    }
  };

  // At most BULK_CONCURRENCY of this bulk's items in flight at once.
  const limit = pLimit(BULK_CONCURRENCY);
  const results: BulkItemResult[] = [];
  for (let start = 0; start < body.emails.length; start += BULK_BATCH_SIZE) {
    if (start > 0 && delay > 0) await sleep(delay);
    results.push(
      ...(await Promise.all(
        body.emails.slice(start, start + BULK_BATCH_SIZE).map((item) => limit(() => sendItem(item))),
      )),
    );
  }
  // Every item refused for the daily limit: the bulk as a whole is over it (429, Retry-After).
  if (overLimit.items === results.length)
    throw new MailroomError('rate_limited', DAILY_LIMIT_REACHED, {
      retryAfterSeconds: overLimit.retryAfterSeconds,
    });
  const sent = results.filter((r) => r.success).length;
  return {
    success: sent === results.length,
    total: results.length,
    sent,
    failed: results.length - sent,
    results,
  };
}
