import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { isDuplicateKeyError } from '../core/errors.ts';
import { temporalAddress, temporalNamespace, uniqueName } from './support/env.ts';
import { harnessGreeting } from './support/harness-workflows.ts';
import { useScratchDatabase } from './support/scratch-database.ts';

/**
 * Proves what every integration test relies on: test/run.ts (or the caller's
 * TEMPORAL_ADDRESS / MONGODB_URI) gives a Temporal server that runs workflows
 * through a real Worker, and a MongoDB-protocol server that enforces unique
 * indexes with MongoDB's duplicate-key code.
 */
describe('test harness', () => {
  describe('Temporal', () => {
    let connection: Connection;
    let nativeConnection: NativeConnection;

    before(async () => {
      // The SDK logs every worker state change at INFO; keep the test report readable.
      Runtime.install({ logger: new DefaultLogger('WARN') });
      connection = await Connection.connect({ address: temporalAddress() });
      nativeConnection = await NativeConnection.connect({ address: temporalAddress() });
    });

    after(async () => {
      await connection.close();
      await nativeConnection.close();
    });

    it('runs a workflow through a real Worker and returns its result', async () => {
      const taskQueue = uniqueName('harness');
      const namespace = temporalNamespace();
      const worker = await Worker.create({
        connection: nativeConnection,
        namespace,
        taskQueue,
        workflowsPath: fileURLToPath(new URL('./support/harness-workflows.ts', import.meta.url)),
      });
      const client = new Client({ connection, namespace });
      const workflowId = uniqueName('harness_run');

      const result = await worker.runUntil(
        client.workflow.execute(harnessGreeting, { taskQueue, workflowId, args: ['Mailroom'] }),
      );

      assert.equal(result, 'hello, Mailroom');
      const description = await client.workflow.getHandle(workflowId).describe();
      assert.equal(description.status.name, 'COMPLETED');
      assert.equal(description.type, 'harnessGreeting');
      assert.equal(description.taskQueue, taskQueue);
    });
  });

  describe('MongoDB', () => {
    const database = useScratchDatabase('harness');

    it('writes and reads back a document', async () => {
      const things = database.db.collection<{ _id: string; name: string; count: number }>('things');
      await things.insertOne({ _id: 'a', name: 'first', count: 1 });
      await things.updateOne({ _id: 'a' }, { $inc: { count: 2 }, $set: { name: 'updated' } });

      assert.deepEqual(await things.findOne({ _id: 'a' }), { _id: 'a', name: 'updated', count: 3 });
    });

    it('selects by the `_id` index when a filter has an `_id` equality besides other conditions', async () => {
      // Every conditional write of Mailroom (claims, leases, "only if still pending")
      // is `{ _id, …conditions }`: on FerretDB these scanned the collection until
      // infra/ferretdb's second patch.
      const things = database.db.collection<{ _id: string; n: number }>('conditional');
      await things.insertMany(Array.from({ length: 50 }, (_, n) => ({ _id: `t${n}`, n })));
      const filter = { _id: 't7', n: { $gte: 7 }, $or: [{ n: 7 }, { n: { $exists: false } }] };

      const explained = JSON.stringify(
        await database.db.command({ explain: { find: 'conditional', filter }, verbosity: 'queryPlanner' }),
      );
      // FerretDB answers SQLite's plan; MongoDB names its `_id` plan.
      assert.match(explained, /USING INDEX \S+__id_|IDHACK|"indexName":"_id_"|EXPRESS/);
      // Selecting by `_id` first must not change what matches.
      assert.equal((await things.updateOne({ ...filter, n: 8 }, { $set: { n: 70 } })).matchedCount, 0);
      assert.equal((await things.updateOne(filter, { $set: { n: 70 } })).matchedCount, 1);
      assert.equal(await things.findOneAndUpdate(filter, { $set: { n: 71 } }), null);
      assert.deepEqual(await things.findOne({ _id: 't7', n: 70 }), { _id: 't7', n: 70 });
      assert.equal((await things.deleteOne({ _id: 't8', n: 9 })).deletedCount, 0);
      assert.equal(await things.countDocuments({ _id: 't8', n: 8 }), 1);
    });

    it('rejects a duplicate under a unique index with code 11000', async () => {
      const users = database.db.collection<{ email: string }>('users');
      await users.createIndex({ email: 1 }, { unique: true });
      await users.insertOne({ email: 'ada@example.com' });

      await assert.rejects(users.insertOne({ email: 'ada@example.com' }), (err: unknown) => {
        assert.equal((err as { code?: unknown }).code, 11000);
        assert.ok(isDuplicateKeyError(err));
        return true;
      });
      assert.equal(await users.countDocuments({ email: 'ada@example.com' }), 1);
    });
  });
});
