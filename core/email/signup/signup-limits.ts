import type { Db } from 'mongodb';
import { RateLimiterMongo, RateLimiterRes } from 'rate-limiter-flexible';
import { MailroomError } from '../../errors.ts';
import type { Logger } from '../../logger.ts';
import { createKeyedLock } from '../../keyed-lock.ts';
import { canonicalMailbox, clientNetwork } from './rate-limit-keys.ts';
import { TOO_MANY_SIGNUP_SENDS } from '../email-messages.ts';

/**
 * Rate limits of unauthenticated signup-template sends: per recipient mailbox
 * (a victim's inbox cannot be flooded) and per client network (one client
 * cannot burn the company's sending reputation), each however it is spelt
 * (rate-limit-keys.ts). Counts live in MongoDB
 * (`rate_limits`), so every gateway replica shares them.
 *
 * The limiter's `$inc` upsert (selected by its `key` field) is atomic on
 * MongoDB and on our FerretDB build (infra/ferretdb/README.md, patch 4;
 * upstream let 15 of 20 parallel consumes of a limit of 5 through): exact
 * across replicas (`npm run test:scale`: 20 at once per recipient on two
 * gateways, limit 5: 5 sent each). Consumes of one key are still serialised
 * in this process, which saves conflicting round trips. TTL indexes are
 * not supported there either: expired counters are deleted by a periodic sweep.
 */
export interface SignupLimits {
  /** Counts one send; throws rate_limited (429, Retry-After) when a limit is spent. */
  consume(recipient: string, clientIp: string | undefined): Promise<void>;
  /** Stops the sweep of expired counters (shutdown). */
  stop(): void;
}

export interface SignupLimitSettings {
  perRecipientPerHour: number;
  perIpPerMinute: number;
}

const COLLECTION = 'rate_limits';
const SWEEP_INTERVAL_MS = 60_000;

export function createSignupLimits(db: Db, settings: SignupLimitSettings, logger: Logger): SignupLimits {
  const limiter = (keyPrefix: string, points: number, duration: number) =>
    new RateLimiterMongo({
      storeClient: db.client,
      dbName: db.databaseName,
      tableName: COLLECTION,
      keyPrefix,
      points,
      duration,
      disableIndexesCreation: true,
    });
  const perRecipient = limiter('signup-recipient', settings.perRecipientPerHour, 3600);
  const perIp = limiter('signup-ip', settings.perIpPerMinute, 60);
  const serial = createKeyedLock();
  const sweep = setInterval(() => {
    db.collection(COLLECTION)
      .deleteMany({ expire: { $lte: new Date() } })
      .catch((err: unknown) => logger.warn({ err }, 'sweeping expired rate-limit counters failed'));
  }, SWEEP_INTERVAL_MS).unref();

  async function take(which: RateLimiterMongo, key: string): Promise<void> {
    try {
      await serial.run(`${which.keyPrefix}:${key}`, () => which.consume(key));
    } catch (res) {
      if (res instanceof RateLimiterRes) {
        throw new MailroomError('rate_limited', TOO_MANY_SIGNUP_SENDS, {
          retryAfterSeconds: res.msBeforeNext / 1000,
        });
      }
      throw res;
    }
  }

  return {
    async consume(recipient, clientIp) {
      if (clientIp) await take(perIp, clientNetwork(clientIp));
      await take(perRecipient, canonicalMailbox(recipient));
    },
    stop() {
      clearInterval(sweep);
    },
  };
}

/**
 * The unique key index the limiter needs; a TTL index where the server has
 * them (MongoDB). Created at start with the email indexes.
 */
export async function ensureRateLimitIndexes(db: Db, logger: Logger): Promise<void> {
  const collection = db.collection(COLLECTION);
  try {
    await collection.createIndex({ key: 1 }, { unique: true });
  } catch (err) {
    logger.warn({ err }, 'could not create the rate_limits key index');
  }
  // FerretDB answers code 238 (not implemented); the sweep above covers it.
  await collection.createIndex({ expire: 1 }, { expireAfterSeconds: 0 }).catch(() => undefined);
}
