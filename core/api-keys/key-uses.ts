import type { Collection, Db } from 'mongodb';
import { LRUCache } from 'lru-cache';
import { isDuplicateKeyError } from '../errors.ts';
import type { Logger } from '../logger.ts';

/**
 * The `api_key_uses` collection: when each key was last used, `_id` = the
 * key's id. Apart from `api_keys` so that recording a use never rewrites the
 * key's own document: on FerretDB an update is a read-modify-write of the
 * whole document, and a use recorded by one gateway while another revoked
 * the key could put `revoked_at: null` back. Here the only writers are
 * last-use writes, and `$max` keeps the latest whichever lands last.
 */
interface KeyUseDocument {
  _id: string;
  last_used_at: Date;
}

/** A key's last use is written at most this often per process. */
const LAST_USED_RESOLUTION_MS = 60_000;

export interface KeyUses {
  /** Records a use of key `id` (in the background, at most once per resolution). */
  note(id: string): void;
  /** The recorded last use of each of `ids` that has one. */
  lastUsed(ids: readonly string[]): Promise<Map<string, Date>>;
}

export function createKeyUses(db: Db, logger: Logger): KeyUses {
  const uses: Collection<KeyUseDocument> = db.collection('api_key_uses');
  const written = new LRUCache<string, number>({ max: 10_000 });

  async function write(id: string, at: Date): Promise<void> {
    try {
      await uses.updateOne({ _id: id }, { $max: { last_used_at: at } }, { upsert: true });
    } catch (err) {
      // Two first uses upserted at once: the other one inserted the document; write again onto it.
      if (!isDuplicateKeyError(err)) throw err;
      await uses.updateOne({ _id: id }, { $max: { last_used_at: at } });
    }
  }

  return {
    note(id) {
      const now = Date.now();
      if (now - (written.get(id) ?? 0) < LAST_USED_RESOLUTION_MS) return;
      written.set(id, now);
      write(id, new Date(now)).catch((err: unknown) => {
        logger.warn({ err, keyId: id }, 'could not record when an API key was last used');
      });
    },

    async lastUsed(ids) {
      if (ids.length === 0) return new Map();
      const docs = await uses.find({ _id: { $in: [...ids] } }).toArray();
      return new Map(docs.map((d) => [d._id, d.last_used_at]));
    },
  };
}
