import { LRUCache } from 'lru-cache';
import type { Collection, Db } from 'mongodb';
import { RateLimiterMongo } from 'rate-limiter-flexible';
import { MailroomError } from '../../../errors.ts';
import { dailyLimitRefusals } from '../../../metrics.ts';
import { DAILY_LIMIT_REACHED } from '../../email-messages.ts';
import { createKeyedLock } from '../../../keyed-lock.ts';
import type { QuotaStatus } from './quota-schema.ts';

/**
 * A company's optional daily sending limit, set by the operator
 * (`npm run keys -- quota --company <uuid> --daily <n>`), kept in
 * `company_quotas` (`_id` = company id). While a limit is set, every live
 * send of the company that is handed to a provider counts against it, in
 * rate-limiter-flexible's MongoDB store (`rate_limits`, one counter per
 * company and UTC day, expiring at the day's end), so every gateway and worker
 * replica shares the count. A send over the limit is refused with 429
 * `daily sending limit reached.` and `Retry-After` (seconds to UTC midnight).
 * Test-mode sends never count. Without a limit nothing is counted.
 *
 * A limit set or changed reaches every replica within LIMIT_CACHE_MS. As for
 * the signup limits, FerretDB's non-atomic `$inc` (docs/storage.md) lets
 * replicas counting at the same instant overshoot by a send each.
 */
export interface DailyQuotas {
  /**
   * Counts one send of `companyId`; throws rate_limited when today's limit is
   * spent. Resolves with the way to give the send back (it never reached a
   * provider), or undefined when the company has no limit.
   */
  take(companyId: string): Promise<(() => Promise<void>) | undefined>;
  status(companyId: string): Promise<QuotaStatus>;
  /** Sets (a positive number) or removes (null) the company's limit. */
  setLimit(companyId: string, daily: number | null): Promise<void>;
}

interface QuotaDoc {
  _id: string;
  daily_limit: number;
  updated_at: Date;
}

/** How long a replica goes on using a limit it read (a changed limit applies within this). */
const LIMIT_CACHE_MS = 5_000;
const NO_LIMIT = 0;

/** The next UTC midnight after `now`. */
export function nextUtcMidnight(now = new Date()): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
}

export function createDailyQuotas(db: Db): DailyQuotas {
  const limits: Collection<QuotaDoc> = db.collection('company_quotas');
  const limiter = new RateLimiterMongo({
    storeClient: db.client,
    dbName: db.databaseName,
    tableName: 'rate_limits',
    keyPrefix: 'daily-quota',
    // The limit is the company's, read per send: the limiter only counts.
    points: Number.MAX_SAFE_INTEGER,
    duration: 86_400,
    disableIndexesCreation: true,
  });
  const serial = createKeyedLock();
  const cache = new LRUCache<string, number>({ max: 10_000, ttl: LIMIT_CACHE_MS });

  async function limitOf(companyId: string, fresh = false): Promise<number> {
    const cached = fresh ? undefined : cache.get(companyId);
    if (cached !== undefined) return cached;
    const doc = await limits.findOne({ _id: companyId });
    const limit = doc?.daily_limit ?? NO_LIMIT;
    cache.set(companyId, limit);
    return limit;
  }

  /** Today's counter of the company, and how long until it ends. */
  function today(companyId: string) {
    const now = new Date();
    const resets = nextUtcMidnight(now);
    const key = `${companyId}:${now.toISOString().slice(0, 10)}`;
    return { key, resets, seconds: Math.max(1, Math.ceil((resets.getTime() - now.getTime()) / 1000)) };
  }

  return {
    async take(companyId) {
      const limit = await limitOf(companyId);
      if (limit === NO_LIMIT) return undefined;
      const { key, seconds } = today(companyId);
      // The counter expires at midnight (set when the day's first send creates it).
      const options = { customDuration: seconds, attrs: {} };
      const counted = await serial.run(key, () => limiter.consume(key, 1, options));
      const giveBack = () => serial.run(key, () => limiter.reward(key, 1, options)).then(() => undefined);
      if (counted.consumedPoints > limit) {
        await giveBack();
        dailyLimitRefusals.inc();
        throw new MailroomError('rate_limited', DAILY_LIMIT_REACHED, { retryAfterSeconds: seconds });
      }
      return giveBack;
    },

    async status(companyId) {
      const limit = await limitOf(companyId, true);
      const { key, resets } = today(companyId);
      const resets_at = resets.toISOString();
      if (limit === NO_LIMIT) return { daily_limit: null, used_today: null, remaining: null, resets_at };
      const used = Math.max(0, (await limiter.get(key))?.consumedPoints ?? 0);
      return { daily_limit: limit, used_today: used, remaining: Math.max(0, limit - used), resets_at };
    },

    async setLimit(companyId, daily) {
      if (daily === null) await limits.deleteOne({ _id: companyId });
      else
        await limits.replaceOne(
          { _id: companyId },
          { daily_limit: daily, updated_at: new Date() },
          { upsert: true },
        );
      cache.delete(companyId);
    },
  };
}
