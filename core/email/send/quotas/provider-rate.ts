import type { Collection, Db } from 'mongodb';
import { isDuplicateKeyError, MailroomError } from '../../../errors.ts';
import { providerRateLimited } from '../../../metrics.ts';
import { SENDING_RATE_LIMITED } from '../../email-messages.ts';
import { createKeyedLock } from '../../../keyed-lock.ts';

/**
 * A provider's maximum sending rate (SENDGRID_MAX_PER_SECOND,
 * SMTP_MAX_PER_SECOND), one schedule per provider for every gateway and
 * worker replica, kept in the database.
 *
 * Time is cut into slots of 1/rate seconds; a send claims the earliest free
 * slot from now on by inserting a document whose `_id` names it
 * (`provider_rate_slots`), then waits until the slot's time. The database's
 * `_id` uniqueness decides between replicas claiming the same slot: the loser
 * moves on to the slot after the latest one taken. A send whose slot would be
 * more than `maxWaitMs` away claims nothing and fails `rate_limited`, saying
 * how long until a slot within the bound is likely (the caller fails over,
 * answers 429 with Retry-After, or lets the workflow step retry then).
 *
 * Why slots and not a counter (rate-limiter-flexible's MongoDB store, as the
 * signup limits use): FerretDB applies concurrent updates of one document
 * without isolation (docs/storage.md), and two replicas counting one window
 * lost counts: measured 13 and 15 sends in windows limited to 10. An insert
 * of a new `_id` is atomic on both MongoDB and FerretDB, so slots hold the
 * rate exactly on both, and space the sends evenly instead of in bursts.
 */
export interface ProviderRate {
  /** Resolves once the send may go; throws MailroomError `rate_limited` when that is more than `maxWaitMs` away. */
  take(maxWaitMs: number): Promise<void>;
}

interface SlotDoc {
  _id: string;
  /** The slot's time: what the sweep deletes by. */
  at: Date;
}

const COLLECTION = 'provider_rate_slots';
/** Slots older than this are deleted (by whichever send notices, at most once per interval). */
const KEEP_MS = 5_000;
/** Slots tried one after another before a claim looks up the latest slot taken (a scan on FerretDB). */
const PROBES = 3;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function providerRate(db: Db, provider: string, perSecond: number): ProviderRate {
  const slots: Collection<SlotDoc> = db.collection(COLLECTION);
  const slotMs = 1000 / perSecond;
  // Zero-padded: `_id`s sort like their slot numbers (the latest one is found by a range).
  const idOf = (slot: number) => `${provider}:${String(slot).padStart(16, '0')}`;
  const range = { $gt: `${provider}:`, $lt: `${provider};` };
  /** The latest slot this process knows is taken: its next claim starts after it. */
  let latest = 0;
  let sweptAt = 0;
  // This process's sends claim one at a time (each knows the slot the previous one took).
  const serial = createKeyedLock();

  async function latestTaken(): Promise<number> {
    const [doc] = await slots.find({ _id: range }).sort({ _id: -1 }).limit(1).toArray();
    return doc ? Number(doc._id.slice(provider.length + 1)) : 0;
  }

  function sweep(now: number): void {
    if (now - sweptAt < KEEP_MS) return;
    sweptAt = now;
    slots.deleteMany({ _id: range, at: { $lt: new Date(now - KEEP_MS) } }).catch(() => undefined);
  }

  /** The slot this send goes in, or the refusal when it is too far away. */
  async function claim(maxWaitMs: number): Promise<number> {
    let slot = Math.max(Math.ceil(Date.now() / slotMs), latest + 1);
    for (let lost = 0; ; lost++) {
      const wait = slot * slotMs - Date.now();
      if (wait > maxWaitMs) {
        providerRateLimited.inc({ provider, result: 'refused' });
        throw new MailroomError('rate_limited', SENDING_RATE_LIMITED, {
          retryAfterSeconds: (wait - maxWaitMs) / 1000,
        });
      }
      try {
        await slots.insertOne({ _id: idOf(slot), at: new Date(slot * slotMs) });
        latest = slot;
        return slot;
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err;
        // Another replica took it: usually it is just ahead, so try the next
        // slot; after a few lost in a row, jump past the latest anyone took.
        latest = lost < PROBES ? slot : Math.max(slot, await latestTaken());
        slot = latest + 1;
      }
    }
  }

  return {
    async take(maxWaitMs) {
      sweep(Date.now());
      const slot = await serial.run(provider, () => claim(maxWaitMs));
      const wait = slot * slotMs - Date.now();
      if (wait > 0) {
        providerRateLimited.inc({ provider, result: 'waited' });
        await sleep(wait);
      }
    },
  };
}
