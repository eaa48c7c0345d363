import { randomUUID } from 'node:crypto';
import type { Db } from 'mongodb';
import { IN_FLIGHT_COLLECTION, type InFlightEntry } from './in-flight.ts';

/**
 * Email ids reserved in blocks, each block covered by one in-flight entry
 * (in-flight.ts): `{ _id: 'block:<uuid>', since, ids: [the block's ids] }`.
 * A new HTTP send takes the next id of the open block, and its pending
 * record needs no entry of its own: the block's entry, written once before
 * any of its ids is used, already names it for the sweeper. One entry in
 * and one out per block, instead of one in and one out per send: a send
 * then makes the floor's two writes (its record's insert and "sent"
 * update). The two per-send writes cost about 8 % of the send bench's
 * throughput (docs/benchmarks.md).
 *
 * - The ids are `randomUUID()`s like any other email id, drawn when the
 *   block is made; the entry lists them, so the sweeper reads each by `_id`.
 * - A block takes ids for at most BLOCK_MAX_AGE_MS after its entry's `since`
 *   (then it is retired, and a new one is made on the next send), so a
 *   record's pending time counts from at most that long before its send
 *   began: nothing against the sweeper's 15 minutes.
 * - A block grows when its ids ran out before it aged (up to MAX_BLOCK_SIZE)
 *   and shrinks to twice what it handed out when it aged first: a trickle of
 *   sends writes small entries, a stream large ones.
 * - Its entry is removed once the block is retired, a grace of the same
 *   length has passed (for ids taken but not yet inserted: the send is
 *   rendering), and every record that entered it left pending (sent or
 *   failed) in this process. A record is entered when its pending insert
 *   starts; an id whose block went before that (a send slower to insert
 *   than the grace) gets an entry of its own, as before blocks. So no
 *   pending record is ever without an entry.
 * - A crash leaves the entry: the sweeper reads the block's ids and fails
 *   the records still pending from before its bound, and drops the entry
 *   once none is pending.
 *
 * Only new unkeyed, unscheduled sends use blocks: a keyed send's record may
 * be finished by another process (an idempotent retry), and a scheduled
 * one's entry counts from its `send_at`.
 */

export const BLOCK_PREFIX = 'block:';
export const MAX_BLOCK_SIZE = 128;
const MIN_BLOCK_SIZE = 4;
/** How long a block hands out ids after its entry's `since`. */
export const BLOCK_MAX_AGE_MS = 1000;
/**
 * A retired block with a record still pending this long (its "sent" or
 * "failed" write failed, and nothing retried it) is forgotten by its
 * process and left to the sweeper, whose bound this is (sweeper.ts): the
 * process's memory holds no block for ever.
 */
const FORGET_AFTER_MS = 15 * 60_000;

export interface IdBlocks {
  /** A new email id, from the open block (made, and its entry's write started, when needed). */
  take(): string;
  /**
   * A pending record of `emailId` is being inserted: resolves once its
   * block's entry is written (rejects if that write failed). Undefined when
   * the id needs an entry of its own: not one of this process's blocks, or
   * its block is gone.
   */
  enter(emailId: string): Promise<void> | undefined;
  /** The record of an entered id left pending (or was never written): true when it was a block's. */
  leave(emailId: string): boolean;
}

export interface IdBlockOptions {
  maxAgeMs?: number;
  maxSize?: number;
  forgetAfterMs?: number;
}

interface Block {
  _id: string;
  ids: string[];
  /** When its entry says it began (ms). */
  since: number;
  /** Retired for the grace: its entry goes once no id is entered. */
  graceOver: boolean;
  /** Set when the grace ended with records still pending: forgets the block (FORGET_AFTER_MS). */
  forgetting?: NodeJS.Timeout;
  /** How many ids were taken. */
  taken: number;
  /** Ids whose pending record was inserted and has not left pending yet. */
  entered: Set<string>;
  written: Promise<void>;
  state: 'open' | 'retired' | 'gone';
}

export const isBlockEntry = (entry: InFlightEntry): entry is InFlightEntry & { ids: string[] } =>
  entry._id.startsWith(BLOCK_PREFIX) && Array.isArray(entry.ids);

export function createIdBlocks(db: Db, options: IdBlockOptions = {}): IdBlocks {
  const entries = db.collection<InFlightEntry>(IN_FLIGHT_COLLECTION);
  const maxAgeMs = options.maxAgeMs ?? BLOCK_MAX_AGE_MS;
  const maxSize = options.maxSize ?? MAX_BLOCK_SIZE;
  const forgetAfterMs = options.forgetAfterMs ?? FORGET_AFTER_MS;
  /** The taken ids of the blocks not gone. */
  const blockOf = new Map<string, Block>();
  let open: Block | undefined;
  let nextSize = MIN_BLOCK_SIZE;

  function makeBlock(): Block {
    const ids = Array.from({ length: nextSize }, () => randomUUID());
    const since = Date.now();
    const block: Block = {
      _id: `${BLOCK_PREFIX}${randomUUID()}`,
      ids,
      since,
      graceOver: false,
      taken: 0,
      entered: new Set(),
      written: Promise.resolve(),
      state: 'open',
    };
    block.written = entries.insertOne({ _id: block._id, since: new Date(since), ids }).then(() => undefined);
    // An entry that could not be written covers nothing: its sends fail (enter rejects), later ones use a new block.
    block.written.catch(() => forget(block));
    setTimeout(() => retire(block), maxAgeMs).unref();
    return block;
  }

  function retire(block: Block): void {
    if (block.state !== 'open') return;
    block.state = 'retired';
    setTimeout(() => {
      block.graceOver = true;
      removeIfDone(block);
      if (block.state === 'retired')
        block.forgetting = setTimeout(() => forget(block), forgetAfterMs - maxAgeMs).unref();
    }, maxAgeMs).unref();
    if (open === block) open = undefined;
    const ranOut = block.taken === block.ids.length;
    nextSize = Math.min(
      maxSize,
      Math.max(MIN_BLOCK_SIZE, block.taken * 2, ranOut ? block.ids.length * 2 : 0),
    );
  }

  function removeIfDone(block: Block): void {
    if (block.state === 'retired' && block.graceOver && block.entered.size === 0) remove(block);
  }

  /** The block is done with: no id of it is entered any more, and none will be. */
  function forget(block: Block): void {
    clearTimeout(block.forgetting);
    block.state = 'gone';
    if (open === block) open = undefined;
    for (const id of block.ids.slice(0, block.taken)) if (blockOf.get(id) === block) blockOf.delete(id);
  }

  function remove(block: Block): void {
    forget(block);
    // After its insert (a removal overtaking it would leave the entry); a failure leaves it to the sweeper.
    void block.written.then(() => entries.deleteOne({ _id: block._id })).catch(() => undefined);
  }

  return {
    take() {
      if (open && Date.now() - open.since > maxAgeMs) retire(open);
      open ??= makeBlock();
      const block = open;
      const id = block.ids[block.taken++]!;
      blockOf.set(id, block);
      if (block.taken === block.ids.length) retire(block);
      return id;
    },

    enter(emailId) {
      const block = blockOf.get(emailId);
      if (!block || block.state === 'gone') return undefined;
      block.entered.add(emailId);
      return block.written;
    },

    leave(emailId) {
      const block = blockOf.get(emailId);
      if (!block?.entered.delete(emailId)) return false;
      blockOf.delete(emailId);
      removeIfDone(block);
      return true;
    },
  };
}
