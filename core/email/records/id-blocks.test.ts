import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { connectDatabase } from '../../db.ts';
import { isUuid } from '../../identity.ts';
import { mongoUri } from '../../../test/support/env.ts';
import { commandsDuring as commandsOn, on } from '../../../test/support/commands.ts';
import { startEmailCore, type EmailCore } from '../../../test/support/email-core.ts';
import { until } from '../../../test/support/until.ts';
import { BLOCK_PREFIX, createIdBlocks } from './id-blocks.ts';
import { IN_FLIGHT_COLLECTION, type InFlightEntry } from './in-flight.ts';

/**
 * New sends' ids come in blocks, one in-flight entry per block: the entry
 * names every id before any of them is inserted, many sends share one
 * entry write, and the entry goes only once the block is retired and every
 * entered record left pending.
 */
describe('id blocks: one in-flight entry for many sends', () => {
  let core: EmailCore;
  const entries = () => core.database.db.collection<InFlightEntry>(IN_FLIGHT_COLLECTION);
  const blockEntries = () =>
    entries()
      .find({ _id: { $regex: `^${BLOCK_PREFIX}` } })
      .toArray();
  const commandsDuring = async (fn: () => Promise<unknown>) =>
    on(IN_FLIGHT_COLLECTION, await commandsOn(core.database, fn));

  before(async () => {
    core = await startEmailCore({ name: 'id_blocks', monitorCommands: true });
  });
  after(() => core.close());

  it('50 sends: distinct UUIDs, named by block entries written before enter resolves, in a few writes', async () => {
    await entries().deleteMany({});
    const blocks = createIdBlocks(core.database.db, { maxAgeMs: 60_000 });
    let ids: string[] = [];
    const commands = await commandsDuring(async () => {
      ids = Array.from({ length: 50 }, () => blocks.take());
      await Promise.all(ids.map((id) => blocks.enter(id)));
    });
    assert.equal(new Set(ids).size, 50);
    for (const id of ids) assert.ok(isUuid(id), id);
    const named = (await blockEntries()).flatMap((entry) => entry.ids ?? []);
    for (const id of ids) assert.ok(named.includes(id), `${id} is named by an entry`);
    // Blocks grow as they run out (4, 8, 16, 32): a handful of inserts for 50 sends.
    assert.ok(commands.length <= 5, `${commands.join(', ')} for 50 sends`);
    assert.ok(commands.every((c) => c === 'insert emails_in_flight'));
    for (const id of ids) assert.equal(blocks.leave(id), true);
    // Not entered (or already left): not a block's any more, its caller removes its own entry.
    assert.equal(blocks.leave(ids[0]!), false);
  });

  it("a block's entry goes once it is retired, its grace is over and every entered record left", async () => {
    await entries().deleteMany({});
    const blocks = createIdBlocks(core.database.db, { maxAgeMs: 200 });
    const [a, b] = [blocks.take(), blocks.take()];
    await Promise.all([blocks.enter(a), blocks.enter(b)]);
    assert.equal((await blockEntries()).length, 1);
    blocks.leave(a);
    await sleep(600); // retired after 200 ms, grace over after 400 ms: b is still pending
    assert.equal((await blockEntries()).length, 1, 'kept while a record of it is pending');
    blocks.leave(b);
    await until('no block entry left', async () => (await blockEntries()).length === 0, 5000);
  });

  it("a block with a record pending past the sweeper's bound is forgotten, its entry left to the sweeper", async () => {
    await entries().deleteMany({});
    const blocks = createIdBlocks(core.database.db, { maxAgeMs: 100, forgetAfterMs: 400 });
    const stuck = blocks.take();
    await blocks.enter(stuck);
    await sleep(700);
    assert.equal(blocks.leave(stuck), false, 'no longer known to its process');
    assert.deepEqual(
      (await blockEntries()).map((entry) => entry.ids?.includes(stuck)),
      [true],
      'the entry stays for the sweeper',
    );
  });

  it('an id whose block went before its record was inserted gets no block entry (it needs its own)', async () => {
    await entries().deleteMany({});
    const blocks = createIdBlocks(core.database.db, { maxAgeMs: 100 });
    const late = blocks.take();
    await until('one block entry', async () => (await blockEntries()).length === 1, 5000);
    await until('no block entry left', async () => (await blockEntries()).length === 0, 5000);
    assert.equal(blocks.enter(late), undefined);
    assert.equal(blocks.leave(late), false);
    // The next send makes a new block.
    const next = blocks.take();
    await blocks.enter(next);
    assert.ok((await blockEntries()).some((entry) => entry.ids?.includes(next)));
  });

  it('a block whose entry could not be written fails its sends and is not used again', async () => {
    // A connection of its own, closed: every write on it fails.
    const closed = await connectDatabase(mongoUri(), core.database.db.databaseName);
    await closed.close();
    const blocks = createIdBlocks(closed.db, { maxAgeMs: 60_000 });
    const doomed = blocks.take();
    await assert.rejects(blocks.enter(doomed)!);
    await sleep(0);
    assert.equal(blocks.enter(doomed), undefined, 'its block is gone');
    assert.notEqual(blocks.take(), doomed);
  });
});
