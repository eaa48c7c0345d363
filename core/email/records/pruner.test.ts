import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, beforeEach, describe, it } from 'node:test';
import type { CommandStartedEvent } from 'mongodb';
import { pino } from 'pino';
import { useScratchDatabase } from '../../../test/support/scratch-database.ts';
import { nextDelay, startPeriodic } from './periodic.ts';
import { pruneExpired } from './pruner.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
const logger = pino({ level: 'silent' });

/** `count` documents created `ageDays` ago, as the send path writes them (only what the pruner reads matters). */
const docs = (count: number, ageDays: number) =>
  Array.from({ length: count }, () => {
    const id = randomUUID();
    return { _id: id, email_id: id, created_at: new Date(Date.now() - ageDays * DAY_MS), subject: 'x' };
  });

describe('pruner: records past EMAIL_RETENTION_DAYS', () => {
  const database = useScratchDatabase('pruner', { monitorCommands: true });
  let commands: CommandStartedEvent[] = [];
  const emails = () => database.db.collection<{ _id: string; created_at: Date }>('emails');
  const stepKeys = () => database.db.collection<{ _id: string; created_at: Date }>('email_idempotency');
  const deliveries = () => database.db.collection<{ _id: string; created_at: Date }>('webhook_deliveries');

  before(() => {
    database.client.on('commandStarted', (e) => commands.push(e));
  });
  beforeEach(async () => {
    await emails().deleteMany({});
    await stepKeys().deleteMany({});
    await deliveries().deleteMany({});
  });

  it('deletes what is older than the retention, oldest first, page by page, by _id; keeps the rest', async () => {
    // Inserted as a year of sends is: oldest first.
    const old = docs(1200, 40);
    const young = docs(300, 2);
    for (let i = 0; i < old.length; i += 600) await emails().insertMany(old.slice(i, i + 600));
    await emails().insertMany(young);
    await stepKeys().insertMany([...docs(50, 40), ...docs(20, 1)]);
    await deliveries().insertMany([...docs(70, 40), ...docs(30, 1)]);

    commands = [];
    const result = await pruneExpired(database.db, logger, { retentionDays: 30, page: 500 });
    const pruning = commands.filter((c) => c.databaseName === database.db.databaseName);
    assert.deepEqual(result, { emails: 1200, email_idempotency: 50, webhook_deliveries: 70 });
    assert.equal(await emails().countDocuments(), 300);
    assert.equal(await stepKeys().countDocuments(), 20);
    assert.equal(await deliveries().countDocuments(), 30);
    for (const r of [young[0]!, young.at(-1)!]) assert.ok(await emails().findOne({ _id: r._id }));
    assert.equal(await emails().findOne({ _id: old.at(-1)!._id }), null);

    // Bounded whatever the collection's size: every read is a limited find with no filter
    // and no sort (FerretDB answers it without a scan), every delete selects one `_id`.
    const finds = pruning.filter((c) => c.commandName === 'find');
    assert.ok(finds.length >= 4, `pages read: ${finds.length}`);
    for (const f of finds) {
      assert.deepEqual(f.command['filter'], {});
      assert.equal(f.command['sort'], undefined);
      assert.equal(f.command['limit'], 500);
    }
    const deletes = pruning.filter((c) => c.commandName === 'delete');
    assert.ok(deletes.length > 0);
    for (const d of deletes)
      for (const q of d.command['deletes'] as Array<{ q: Record<string, unknown> }>)
        assert.deepEqual(Object.keys(q.q), ['_id']);
  });

  it('0 keeps everything; a spent time budget stops the run and the next one goes on', async () => {
    await emails().insertMany(docs(400, 400));
    assert.deepEqual(await pruneExpired(database.db, logger, { retentionDays: 0 }), {
      emails: 0,
      email_idempotency: 0,
      webhook_deliveries: 0,
    });
    assert.deepEqual(await pruneExpired(database.db, logger, { retentionDays: 30, budgetMs: 0 }), {
      emails: 0,
      email_idempotency: 0,
      webhook_deliveries: 0,
    });
    assert.equal(await emails().countDocuments(), 400);
    assert.equal((await pruneExpired(database.db, logger, { retentionDays: 365 })).emails, 400);
  });
});

describe('periodic tasks take a bounded share of the time', () => {
  it('waits the interval, or 19 times a long run (5%)', () => {
    assert.equal(nextDelay(60_000, 100), 60_000);
    assert.equal(Math.round(nextDelay(60_000, 10_000)), 190_000);
  });

  it('starts the next run no sooner than the share allows after a slow one', async () => {
    const starts: number[] = [];
    const task = startPeriodic({
      run: async () => {
        starts.push(performance.now());
        await new Promise((r) => setTimeout(r, 40));
      },
      intervalMs: 5,
      logger,
      failure: 'failed',
      maxShare: 0.2,
    });
    try {
      for (let i = 0; i < 200 && starts.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    } finally {
      await task.stop();
    }
    assert.equal(starts.length >= 2, true);
    // A run of ≥ 40 ms at a 20% share: ≥ 160 ms of rest, so ≥ 200 ms from start to start.
    assert.ok(starts[1]! - starts[0]! >= 195, `${starts[1]! - starts[0]!} ms`);
  });
});
