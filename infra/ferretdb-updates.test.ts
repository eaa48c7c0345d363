import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient, type Collection } from 'mongodb';
import { mongoUri, uniqueName } from '../test/support/env.ts';

/**
 * Bulk updates at once, as SendGrid's Event Webhook batches (25 events each,
 * posted concurrently) and the open buffer's flushes write them. FerretDB 1.24
 * kept every statement's query open until its whole command ended, so 16
 * bulk writes of 25 updates held all 100 of a database's SQLite connections
 * while each waited for one more: every client of that database hung for good
 * (found by the 1,000,000-record bench; patch 3 in infra/ferretdb/README.md).
 */
const BULKS = 16;
const PER_BULK = 25;
const WAIT_MS = 30_000;

describe('the database under concurrent bulk updates', () => {
  let client: MongoClient;
  let records: Collection<{ _id: string; n: number }>;
  const ids = Array.from({ length: BULKS * PER_BULK }, (_, i) => `record-${i}`);

  before(async () => {
    client = await new MongoClient(mongoUri(), { serverSelectionTimeoutMS: 5000 }).connect();
    records = client.db(uniqueName('bulk')).collection('records');
    await records.insertMany(ids.map((_id) => ({ _id, n: 0 })));
  });
  after(async () => {
    await records.db.dropDatabase().catch(() => undefined);
    await client.close();
  });

  it(`${BULKS} bulk writes of ${PER_BULK} updates by _id at once all finish, each update applied once`, async () => {
    const bulks = Array.from({ length: BULKS }, (_, b) =>
      records.bulkWrite(
        ids
          .slice(b * PER_BULK, (b + 1) * PER_BULK)
          .map((id) => ({ updateOne: { filter: { _id: id }, update: { $inc: { n: 1 } } } })),
        { ordered: true },
      ),
    );
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      Promise.all(bulks).then((results) => results.reduce((sum, r) => sum + r.modifiedCount, 0)),
      new Promise<'hung'>((resolve) => (timer = setTimeout(() => resolve('hung'), WAIT_MS))),
    ]).finally(() => clearTimeout(timer));
    assert.equal(outcome, BULKS * PER_BULK, `bulk writes: ${outcome} (expected every update applied)`);
    const counts = await records.find({}, { projection: { n: 1 } }).toArray();
    assert.deepEqual([...new Set(counts.map((r) => r.n))], [1], 'every record updated exactly once');
  });
});

/**
 * Updates of one document from many clients at once, as two gateways write an
 * email's open and its click, or count one signup limit. FerretDB 1.24 read the
 * document, applied the operators and wrote it back with nothing in between:
 * 100 concurrent `$inc` from 5 clients ended at 4, and of two fields set at
 * once on one document only one stayed, on most documents (patch 4 in infra/ferretdb/README.md). MongoDB's
 * single-document updates are atomic; so are ours now.
 */
describe('the database under concurrent updates of one document', () => {
  const CLIENTS = 5;
  const EACH = 20;
  let clients: MongoClient[];
  let dbName: string;

  before(async () => {
    dbName = uniqueName('atomic');
    clients = await Promise.all(
      Array.from({ length: CLIENTS }, () =>
        new MongoClient(mongoUri(), { serverSelectionTimeoutMS: 5000 }).connect(),
      ),
    );
  });
  after(async () => {
    await clients[0]!
      .db(dbName)
      .dropDatabase()
      .catch(() => undefined);
    await Promise.all(clients.map((c) => c.close()));
  });

  const collection = (i: number) =>
    clients[i % CLIENTS]!.db(dbName).collection<{ _id: string; n?: number; a?: boolean; b?: boolean }>(
      'docs',
    );

  it(`${CLIENTS * EACH} concurrent $inc of one counter from ${CLIENTS} clients (updateOne and findOneAndUpdate) count ${CLIENTS * EACH}`, async () => {
    await collection(0).insertOne({ _id: 'counter', n: 0 });
    await Promise.all(
      Array.from({ length: CLIENTS * EACH }, (_, i) =>
        i % 2 === 0
          ? collection(i).updateOne({ _id: 'counter' }, { $inc: { n: 1 } })
          : collection(i).findOneAndUpdate({ _id: 'counter' }, { $inc: { n: 1 } }),
      ),
    );
    assert.equal((await collection(0).findOne({ _id: 'counter' }))?.n, CLIENTS * EACH);
  });

  it('two fields set at once by two clients on each of 100 documents: both stay, on every one', async () => {
    const ids = Array.from({ length: 100 }, (_, i) => `doc-${i}`);
    await collection(0).insertMany(ids.map((_id) => ({ _id })));
    await Promise.all(
      ids.flatMap((id) => [
        collection(0).updateOne({ _id: id }, { $set: { a: true } }),
        collection(1).updateOne({ _id: id }, { $set: { b: true } }),
      ]),
    );
    const docs = await collection(0)
      .find({ _id: { $in: ids } })
      .toArray();
    const lost = docs.filter((d) => d.a !== true || d.b !== true).map((d) => d._id);
    assert.deepEqual(lost, [], 'documents that lost a field');
  });

  it('concurrent first upserts of one key (a rate limiter’s counter) make one document counting all of them', async () => {
    const limits = (i: number) =>
      clients[i % CLIENTS]!.db(dbName).collection<{ key: string; points: number; expire: Date | null }>(
        'limits',
      );
    await Promise.all(
      Array.from({ length: CLIENTS * EACH }, (_, i) =>
        limits(i).findOneAndUpdate(
          { $or: [{ expire: { $gt: new Date() } }, { expire: { $eq: null } }], key: 'signup:x' },
          {
            $setOnInsert: { key: 'signup:x', expire: new Date(Date.now() + 3_600_000) },
            $inc: { points: 1 },
          },
          { upsert: true, returnDocument: 'after' },
        ),
      ),
    );
    const docs = await limits(0).find({ key: 'signup:x' }).toArray();
    assert.deepEqual(
      docs.map((d) => d.points),
      [CLIENTS * EACH],
    );
  });
});
