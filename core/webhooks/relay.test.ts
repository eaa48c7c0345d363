import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Db } from 'mongodb';
import { createLogger } from '../logger.ts';
import type { DeliveryStore } from './delivery-store.ts';
import type { Outbox, OutboxDoc } from './outbox.ts';
import { MAX_DELIVERIES_PER_RUN, MAX_RUN_PAYLOAD_BYTES } from './delivery-workflow.ts';
import { createRelay, runsOf } from './relay.ts';
import type { Subscriptions } from './subscriptions.ts';

/**
 * The relay's announcements against an outbox in memory whose removals can
 * be held back: the order of the outbox's writes is what decides whether an
 * event survives a crash (the outbox is what recovery reads).
 */
describe('webhook relay: announcements', () => {
  function setUp() {
    const stored = new Map<string, OutboxDoc>();
    const writes: string[] = [];
    let releaseRemoval: () => void = () => {};
    let holdRemovals = false;
    const outbox: Outbox = {
      async add(docs) {
        for (const doc of docs) {
          writes.push(`add ${doc._id}`);
          if (!stored.has(doc._id)) stored.set(doc._id, doc); // an existing id is skipped
        }
      },
      async remove(ids) {
        if (holdRemovals) await new Promise<void>((resolve) => (releaseRemoval = resolve));
        for (const id of ids) {
          writes.push(`remove ${id}`);
          stored.delete(id);
        }
      },
      olderThan: async () => [],
    };
    const subscriptions: Subscriptions = {
      wants: async () => true,
      matching: async () => [],
    } as unknown as Subscriptions;
    const deliveries = { createMany: async () => new Set<string>() } as unknown as DeliveryStore;
    const emails = { findOne: async () => null };
    const relay = createRelay({
      db: { collection: () => emails } as unknown as Db,
      outbox,
      subscriptions,
      deliveries,
      startDelivery: async () => 'started',
      startBatch: async () => undefined,
      logger: createLogger('test', { logLevel: 'silent', logPretty: false }),
    });
    return {
      relay,
      stored,
      writes,
      holdRemovals: () => (holdRemovals = true),
      release: () => {
        holdRemovals = false;
        releaseRemoval();
      },
    };
  }

  it('a retry announcing the same event waits for the refused attempt’s removal', async () => {
    const { relay, stored, writes, holdRemovals, release } = setUp();
    const emailId = randomUUID();
    const sent = () => relay.sink.intend([{ kind: 'sent', emailId, at: new Date() }]);

    const first = await sent();
    const [id] = [...stored.keys()];
    assert.ok(id, 'the first attempt’s announcement is in the outbox');
    // The provider refused the first attempt; its removal is slow to reach the database.
    holdRemovals();
    first.settled(false);
    // The retry of the same send announces the same event id meanwhile.
    const retry = sent();
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(writes, [`add ${id}`], 'the retry’s insert waits for the removal');
    release();
    await retry;
    assert.deepEqual(writes, [`add ${id}`, `remove ${id}`, `add ${id}`]);
    assert.ok(stored.has(id), 'the retry’s event is in the outbox, for recovery to find after a crash');
  });

  it('announcements of other events do not wait for a removal', async () => {
    const { relay, stored, holdRemovals, release } = setUp();
    const refused = await relay.sink.intend([{ kind: 'sent', emailId: randomUUID(), at: new Date() }]);
    holdRemovals();
    refused.settled(false);
    await relay.sink.intend([{ kind: 'sent', emailId: randomUUID(), at: new Date() }]);
    assert.equal(stored.size, 2, 'the other event was written while the removal was held');
    release();
  });
});

describe('webhook relay: runs of a hand-over', () => {
  const deliveries = (count: number, bytes: number) =>
    Array.from({ length: count }, (_, i) => ({
      deliveryKey: `endpoint/evt${i}`,
      eventId: `evt${i}`,
      payload: 'x'.repeat(bytes),
    }));

  it('cuts by count: every delivery once, in order, at most MAX_DELIVERIES_PER_RUN a run', () => {
    const all = deliveries(2 * MAX_DELIVERIES_PER_RUN + 7, 800);
    const runs = runsOf(all);
    assert.deepEqual(
      runs.map((run) => run.length),
      [MAX_DELIVERIES_PER_RUN, MAX_DELIVERIES_PER_RUN, 7],
    );
    assert.deepEqual(runs.flat(), all);
  });

  it('cuts by size: no run carries more than MAX_RUN_PAYLOAD_BYTES of bodies, a larger body runs alone', () => {
    const large = deliveries(10, Math.floor(MAX_RUN_PAYLOAD_BYTES / 3));
    const runs = runsOf([...large, ...deliveries(1, MAX_RUN_PAYLOAD_BYTES + 1)]);
    for (const run of runs.slice(0, -1))
      assert.ok(run.reduce((sum, d) => sum + d.payload.length, 0) <= MAX_RUN_PAYLOAD_BYTES);
    assert.deepEqual(
      runs.map((run) => run.length),
      [3, 3, 3, 1, 1],
    );
  });
});
