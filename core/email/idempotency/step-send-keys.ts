import type { Collection, Db } from 'mongodb';
import { isDuplicateKeyError } from '../../errors.ts';
import { createKeyedLock } from '../../keyed-lock.ts';

/**
 * The `email_idempotency` collection: which email record an idempotency key
 * (a workflow step's `<workflowId>:<step>`) reserved, and the lease of the
 * attempt currently talking to the provider for it.
 *
 * `_id` is the key, unique by nature. A collection of its own instead of a
 * sparse unique index on `emails`, because FerretDB 1.24 has no partial
 * indexes and drops the `sparse` option.
 */

interface IdempotencyDoc {
  _id: string;
  email_id: string;
  created_at: Date;
  /** While set and in the future, an attempt is talking to the provider. */
  attempt_until?: Date | null;
}

export interface StepSendKeys {
  /**
   * A key's first attempt in one write: reserves `candidateId` for `key` with
   * the attempt lease already taken until `until`. The first caller wins; false
   * when the key exists (an earlier attempt reserved it): the caller reads the
   * reserved id (findEmailId) and takes the lease with claimAttempt. Keys are
   * never deleted, so that id stays.
   */
  reserveFirst(key: string, candidateId: string, until: Date): Promise<boolean>;
  findEmailId(key: string): Promise<string | undefined>;
  /**
   * Takes the attempt lease of `key` until `until`; false when another attempt
   * holds it. A lease (not a flag) so a crashed attempt cannot block the key forever.
   */
  claimAttempt(key: string, until: Date): Promise<boolean>;
  /** Gives the lease back (a failed attempt that will be retried). */
  releaseAttempt(key: string): Promise<void>;
}

export function createStepSendKeys(db: Db): StepSendKeys {
  const keys: Collection<IdempotencyDoc> = db.collection('email_idempotency');
  /** Serialises the lease updates of one key (FerretDB's updates are read-modify-write). */
  const lock = createKeyedLock();

  return {
    async reserveFirst(key, candidateId, until) {
      try {
        await keys.insertOne({
          _id: key,
          email_id: candidateId,
          created_at: new Date(),
          attempt_until: until,
        });
        return true;
      } catch (err) {
        if (isDuplicateKeyError(err)) return false;
        throw err;
      }
    },

    async findEmailId(key) {
      return (await keys.findOne({ _id: key }))?.email_id;
    },

    /*
     * The conditional filter is atomic on MongoDB, so two processes cannot
     * both take the lease. FerretDB selects the key by `_id` (its index) and
     * checks the lease in memory; its updates are read-modify-write, so the
     * in-process lock serialises concurrent claims of one key.
     */
    claimAttempt: (key, until) =>
      lock.run(key, async () => {
        const now = new Date();
        const result = await keys.updateOne(
          { _id: key, $or: [{ attempt_until: null }, { attempt_until: { $lt: now } }] },
          { $set: { attempt_until: until } },
        );
        return result.modifiedCount > 0;
      }),

    releaseAttempt: (key) =>
      lock.run(key, async () => {
        await keys.updateOne({ _id: key }, { $set: { attempt_until: null } });
      }),
  };
}
