import type { Db } from 'mongodb';
import { isDuplicateKeyError } from '../core/errors.ts';

/**
 * The `welcome_keys` collection: which send key follows which, per user, so
 * that every run sending a user's welcome email sends under one key however
 * many claim it at once.
 *
 * Why: the claim on the user document is a conditional write, atomic on
 * MongoDB; FerretDB (the embedded and CI database) reads, checks and writes
 * the document back without isolation, so two runs on two workers (or one)
 * can both "win" it (measured with `npm run test:scale`: 31 emails for 30
 * users claimed twice at once). An insert of a unique `_id` is atomic on
 * both: the first run to insert `[user, previous key]` names the next key,
 * and every other run reads it and sends under it, so the email core's
 * exactly-once key (its own unique insert, core/email/idempotency) lets one
 * message out. On MongoDB the claim already decides and this only agrees.
 */

interface WelcomeKeyDoc {
  /** JSON `[user _id, the key this one follows, "" for the user's first]`. */
  _id: string;
  key: string;
  created_at: Date;
}

export const WELCOME_KEYS_COLLECTION = 'welcome_keys';

export function createWelcomeKeys(db: Db) {
  const keys = db.collection<WelcomeKeyDoc>(WELCOME_KEYS_COLLECTION);
  return {
    /**
     * The key that follows `previous` (undefined: the user's first) for user
     * `userId` (its stored `_id`): `proposed` if this call is the first to
     * ask, else what the first one proposed.
     */
    async successor(userId: string, previous: string | undefined, proposed: string): Promise<string> {
      const _id = JSON.stringify([userId, previous ?? '']);
      try {
        await keys.insertOne({ _id, key: proposed, created_at: new Date() });
        return proposed;
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err;
      }
      const winner = await keys.findOne({ _id });
      if (!winner) throw new Error(`welcome key vanished: ${_id}`);
      return winner.key;
    },
  };
}
