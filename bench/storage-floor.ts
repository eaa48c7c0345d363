import { randomUUID } from 'node:crypto';
import type { Db, MongoClient } from 'mongodb';
import { createUserActivities, USERS_COLLECTION, type UserDocument } from '../activities/users.ts';
import type { EmailService } from '../core/email/contract.ts';
import { STATUS_RANK, type EmailRecord } from '../core/email/records/record.ts';
import { measure, type Figures, type Ratio } from './lib/measure.ts';
import { invoiceRecord } from './lib/records.ts';

/**
 * Storage floors: the database work of a path alone, done directly with the
 * mongodb driver from the bench process at the same concurrency as the path's
 * bench, with no gateway, no provider and no Temporal. Neither our path nor
 * its floor can do that work faster than this, so where the storage alone is
 * slower than the floor a ratio is measured against, that ratio is bounded by
 * the database (FerretDB's SQLite backend has one writer at a time), not by
 * our code. Printed as `storage_floor <name> <figure> <unit>` lines.
 */
export interface StorageFloor {
  /** The ratio this floor bounds (`send`, `workflow_latency`, `workflow_throughput`). */
  name: string;
  figures: Figures;
  /** How the figure is read: operations per second, or median milliseconds. */
  unit: 'sends/s' | 'runs/s' | 'ms';
}

/**
 * Runs `fn` on a database of its own, dropped afterwards. FerretDB keeps one
 * SQLite file per database, and its reads and updates by `_id` were measured
 * to slow down as a database accumulates writes (≈ 10 ms → 25 ms over 400
 * welcome runs' writes): a fresh database gives the storage floor the same
 * clean start our paths had, so it stays a floor.
 */
export async function onScratchDatabase<T>(client: MongoClient, base: string, fn: (db: Db) => Promise<T>) {
  const db = client.db(`${base}_storage`);
  try {
    return await fn(db);
  } finally {
    await db.dropDatabase().catch(() => undefined);
  }
}

/** The number a `storage_floor` line carries: ops/s, or the median in ms. */
export const storageFloorValue = (s: StorageFloor): number =>
  s.unit === 'ms' ? s.figures.p50 : s.figures.ops;

/** The machine-readable line, exactly `storage_floor <name> <value> <unit>`. */
export const storageFloorLine = (s: StorageFloor): string =>
  `storage_floor ${s.name} ${storageFloorValue(s).toFixed(s.unit === 'ms' ? 1 : 2)} ${s.unit}`;

/**
 * The best ratio the storage alone allows: the floor's time ÷ the storage's
 * time (workflows: the no-op floor does no database work, ours must do at
 * least this). For `send` the floor does the same writes plus the provider
 * call, so this says how much of the floor's own time is storage.
 */
export function storageBound(s: StorageFloor, ratio: Ratio): number {
  switch (ratio.basis) {
    case 'throughput':
      return s.figures.ops / ratio.floor.ops;
    case 'median time':
      return ratio.floor.p50 / s.figures.p50;
    case 'total time':
      return ratio.floor.seconds / s.figures.seconds;
  }
}

/** What each storage floor does, for the explanatory lines. */
export const STORAGE_FLOOR_WORK: Record<string, string> = {
  send: 'insert the pending record + update it to sent',
  workflow_latency:
    'one welcome run’s writes, sequentially: claim the user (read in the same write), reserve the send’s key, insert the pending record, mark it sent, set the flag',
  workflow_throughput:
    'the same writes for every welcome run of the burst, as many runs at a time as the worker runs steps (WORKER_CONCURRENCY)',
};

/**
 * send: insert the pending record and update it to sent (the send floor's
 * writes, the same record), `concurrency` in flight like the send bench.
 */
export async function storageFloorSend(
  db: Db,
  opts: { count: number; concurrency: number; warmup: number },
): Promise<StorageFloor> {
  const emails = db.collection<EmailRecord>('storage_floor_emails');
  const figures = await measure(
    'storage alone: insert + update of one record',
    { count: opts.count, concurrency: opts.concurrency, warmup: opts.warmup },
    async () => {
      const emailId = randomUUID();
      await emails.insertOne(
        invoiceRecord({
          emailId,
          to: 'customer@example.com',
          subject: 'Invoice',
          status: 'pending',
          providerId: null,
        }),
      );
      await emails.updateOne(
        { _id: emailId },
        {
          $set: { provider_id: `p-${emailId}`, sent_at: new Date() },
          $max: { status_rank: STATUS_RANK.sent },
        },
      );
    },
  );
  return { name: 'send', figures, unit: 'sends/s' };
}

/**
 * The database work one welcome run cannot do without: the user steps exactly
 * as the activities do them (claimUserWelcomeEmail, markWelcomeEmailSent) and
 * the least a keyed send writes (reserve its idempotency key, insert the
 * pending record, mark it sent; the email core does a few reads more).
 */
function welcomeRunStorage(db: Db): (userId: string) => Promise<void> {
  // A first claim never asks the email core anything (no earlier send to check).
  const userSteps = createUserActivities({ db, email: undefined as unknown as EmailService });
  const keys = db.collection<{ _id: string; email_id: string; created_at: Date }>('storage_floor_keys');
  const emails = db.collection<EmailRecord>('storage_floor_emails');
  // Every run acts for a company (its caller's), which the user steps check.
  const companyId = randomUUID();
  return async (userId) => {
    const runId = `storage-floor-${randomUUID()}`;
    const claim = await userSteps.claimUserWelcomeEmail(userId, runId, companyId);
    if (claim.claim !== 'claimed') throw new Error(`storage floor: ${userId} ${claim.claim}`);
    const candidate = randomUUID();
    const key = await keys.findOneAndUpdate(
      { _id: claim.idempotencyKey },
      { $setOnInsert: { email_id: candidate, created_at: new Date() } },
      { upsert: true, returnDocument: 'after' },
    );
    const emailId = key?.email_id ?? candidate;
    await emails.insertOne(
      invoiceRecord({ emailId, to: claim.email, subject: 'Welcome', status: 'pending', providerId: null }),
    );
    await emails.updateOne(
      { _id: emailId },
      { $set: { provider_id: `p-${emailId}`, sent_at: new Date() }, $max: { status_rank: STATUS_RANK.sent } },
    );
    await userSteps.markWelcomeEmailSent(userId, companyId);
  };
}

async function newUsers(db: Db, count: number): Promise<string[]> {
  const users = db.collection<UserDocument>(USERS_COLLECTION);
  const docs = Array.from({ length: count }, () => {
    const _id = `storage-floor-${randomUUID()}`;
    return { _id, email: `${_id}@example.com`, name: 'Bench User' };
  });
  // One insert per user: FerretDB slows down sharply with many documents per command.
  for (const doc of docs) await users.insertOne(doc);
  return docs.map((d) => d._id);
}

/**
 * workflow_latency: `sequential` welcome runs' database work one after the
 * other (after 2 untimed), median per run; workflow_throughput: `parallel`
 * runs' database work, `concurrency` runs in flight, total time. The
 * concurrency is the worker's (WORKER_CONCURRENCY): however many runs are
 * started, our worker runs that many steps at a time. (All 200 at once,
 * FerretDB's SQLite backend answers some writes `database is locked`.)
 */
export async function storageFloorWorkflows(
  db: Db,
  opts: { sequential: number; parallel: number; concurrency: number },
): Promise<{ latency: StorageFloor; throughput: StorageFloor }> {
  const run = welcomeRunStorage(db);
  // Each run needs a user of its own: the 2 warmup runs take the first two.
  const sequentialUsers = await newUsers(db, opts.sequential + 2);
  const latency = await measure(
    'storage alone: one welcome run’s writes',
    { count: opts.sequential, concurrency: 1, warmup: 2 },
    (i) => run(sequentialUsers[i < 0 ? -1 - i : i + 2]!),
  );
  const burstUsers = await newUsers(db, opts.parallel);
  const throughput = await measure(
    `storage alone: ${opts.parallel} runs’ writes, ${opts.concurrency} at once`,
    { count: opts.parallel, concurrency: opts.concurrency, warmup: 0 },
    (i) => run(burstUsers[i]!),
  );
  return {
    latency: { name: 'workflow_latency', figures: latency, unit: 'ms' },
    throughput: { name: 'workflow_throughput', figures: throughput, unit: 'runs/s' },
  };
}
