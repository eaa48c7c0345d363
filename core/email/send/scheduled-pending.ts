import { LRUCache } from 'lru-cache';
import type { Collection, Db } from 'mongodb';
import { MailroomError } from '../../errors.ts';
import { createKeyedLock } from '../../keyed-lock.ts';
import { tooManyScheduled, tooMuchScheduledBody } from '../email-messages.ts';

/**
 * The bound on what a company keeps scheduled: at most `maxCount` scheduled
 * emails still pending, holding at most `maxChars` of stored request
 * between them, per company and mode (live and test apart, so a test
 * suite's schedules never block live ones). Each pending scheduled email
 * holds a sleeping Temporal run and its stored request (up to 12 MB) for up
 * to 30 days: without a bound, one caller could fill both.
 *
 * Counting the pending emails at each schedule would scan
 * `scheduled_emails` (FerretDB indexes nothing but `_id`), so each owner has
 * a counter document in `scheduled_pending` (`_id` = `<company id>:live` or
 * `:test`), counted up when a schedule is admitted and down when its stored
 * request is removed (sent, failed, cancelled: scheduled-store.ts `remove`,
 * which reports the removal once). Admissions of one owner take turns in a
 * process, so one gateway never passes the bound; gateways admitting at the
 * same instant may pass it by the few in flight (FerretDB's `$inc` is not
 * atomic across connections, docs/storage.md).
 *
 * A counter can only drift up (a process that died between the count and
 * the insert, or between a removal and its count-down), never let more in:
 * so when it refuses, the owner's stored requests are counted for real (at
 * most once per RECOUNT_EVERY_MS per owner and process: a scan), with the
 * ones this process admitted and is still storing (by email id: one stored
 * while the scan runs is counted once), and the counter set to that before
 * deciding. Another gateway's admissions still being stored are missed by
 * the recount: the bound may pass by those few.
 */
export interface ScheduledOwner {
  companyId: string;
  test: boolean;
}

export interface PendingSchedules {
  /**
   * Takes a place for scheduled email `emailId` of `owner`, whose stored
   * request is `chars` long; throws a conflict (409) when the owner has
   * none left. The admission must then be `stored` or given back.
   */
  admit(owner: ScheduledOwner, emailId: string, chars: number): Promise<Admission>;
  /** A scheduled email of `owner` holding `chars` met its fate: its place is free. */
  release(owner: ScheduledOwner, chars: number): Promise<void>;
}

export interface Admission {
  /** The request is stored: a recount finds it now. */
  stored(): void;
  /** The schedule failed before its request was stored: its place is free. */
  giveBack(): Promise<void>;
}

export interface PendingLimits {
  maxCount: number;
  maxChars: number;
}

/** One stored request, as a recount sees it. */
export interface HeldRequest {
  emailId: string;
  chars: number;
}

interface PendingDoc {
  _id: string;
  count: number;
  chars: number;
  updated_at: Date;
}

export const SCHEDULED_PENDING_COLLECTION = 'scheduled_pending';
/** A refused owner's emails are counted for real at most this often, per process. */
export const RECOUNT_EVERY_MS = 60_000;
const keyOf = (owner: ScheduledOwner) => `${owner.companyId}:${owner.test ? 'test' : 'live'}`;

export function createPendingSchedules(
  db: Db,
  limits: PendingLimits,
  /** The owner's stored requests now (a scan). */
  heldBy: (owner: ScheduledOwner) => Promise<HeldRequest[]>,
): PendingSchedules {
  const counters: Collection<PendingDoc> = db.collection(SCHEDULED_PENDING_COLLECTION);
  const turns = createKeyedLock();
  const recounted = new LRUCache<string, true>({ max: 10_000, ttl: RECOUNT_EVERY_MS });
  /** Per owner: admitted here, request not stored yet (email id → characters). */
  const storing = new Map<string, Map<string, number>>();

  /** What keeps one more email of `chars` out, if anything. */
  function refusal(doc: PendingDoc | null, chars: number): string | undefined {
    // Counts of requests stored before the bound existed go below zero when removed.
    const count = Math.max(0, doc?.count ?? 0);
    const held = Math.max(0, doc?.chars ?? 0);
    if (count >= limits.maxCount) return tooManyScheduled(limits.maxCount);
    if (held + chars > limits.maxChars) return tooMuchScheduledBody(limits.maxChars);
    return undefined;
  }

  /** Runs in the owner's turn: no admission starts meanwhile, so `storing` only shrinks. */
  async function recount(owner: ScheduledOwner, key: string): Promise<PendingDoc> {
    recounted.set(key, true);
    const requests = new Map(storing.get(key));
    for (const { emailId, chars } of await heldBy(owner)) requests.set(emailId, chars);
    let chars = 0;
    for (const size of requests.values()) chars += size;
    const doc = { _id: key, count: requests.size, chars, updated_at: new Date() };
    await counters.replaceOne({ _id: key }, doc, { upsert: true });
    return doc;
  }

  async function release(owner: ScheduledOwner, chars: number): Promise<void> {
    await counters.updateOne(
      { _id: keyOf(owner) },
      { $inc: { count: -1, chars: -chars }, $set: { updated_at: new Date() } },
    );
  }

  function settled(key: string, emailId: string): void {
    const admitted = storing.get(key);
    admitted?.delete(emailId);
    if (admitted?.size === 0) storing.delete(key);
  }

  return {
    admit: (owner, emailId, chars) => {
      const key = keyOf(owner);
      return turns.run(key, async () => {
        let problem = refusal(await counters.findOne({ _id: key }), chars);
        if (problem && !recounted.has(key)) problem = refusal(await recount(owner, key), chars);
        // 409, as for the company's other holdings (webhook endpoints, schedules, keys): a place
        // frees when one of its emails is sent or cancelled, not after a time anyone can tell.
        if (problem) throw new MailroomError('conflict', problem);
        await counters.updateOne(
          { _id: key },
          { $inc: { count: 1, chars }, $set: { updated_at: new Date() } },
          { upsert: true },
        );
        storing.set(key, (storing.get(key) ?? new Map<string, number>()).set(emailId, chars));
        return {
          stored: () => settled(key, emailId),
          giveBack: () => {
            settled(key, emailId);
            return release(owner, chars);
          },
        };
      });
    },
    release,
  };
}
