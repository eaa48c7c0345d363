import { after, before, beforeEach, describe, it } from 'node:test';
import { authenticatedAs } from '../../identity.ts';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { isMailroomError } from '../../errors.ts';
import { startEmailCore, type EmailCore } from '../../../test/support/email-core.ts';
import { welcomeBody } from '../../../test/support/sample-emails.ts';
import type { Caller } from '../../identity.ts';
import { STATUS_RANK, statusOf, type EmailRecord } from './record.ts';
import { createRecordStore } from './record-store.ts';
import { IN_FLIGHT_COLLECTION, type InFlightEntry } from './in-flight.ts';
import { isBlockEntry } from './id-blocks.ts';
import { PENDING_BOUND_MS, startSweeper, sweepStuckPending, type SweptRecord } from './sweeper.ts';

const caller: Caller = { companyId: randomUUID(), organizationId: randomUUID(), userId: randomUUID() };
const body = (subject: string) => welcomeBody({ to: { email: 'user@example.com', name: 'User' }, subject });

/** A logger whose JSON lines land in `lines`. */
function capturingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean))
        lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
}

describe('sweeper: records stuck in pending', () => {
  let core: EmailCore;
  const emails = () => core.database.db.collection<EmailRecord>('emails');
  const inFlight = () => core.database.db.collection<InFlightEntry>(IN_FLIGHT_COLLECTION);
  const byKey = (key: string) => emails().findOne({ idempotency_key: key });
  /** As if created `ms` ago: the record, and its in-flight entry if it has one. */
  const backdate = async (emailId: string, ms: number) => {
    const at = new Date(Date.now() - ms);
    await emails().updateOne({ _id: emailId }, { $set: { created_at: at } });
    await inFlight().updateOne({ _id: emailId }, { $set: { since: at } });
  };
  /** A keyed send left pending by a failed attempt: `503` (not sent) or `accept-then-drop` (maybe sent). */
  async function leftPending(answer: 503 | 'accept-then-drop'): Promise<EmailRecord> {
    const key = `wf-${randomUUID()}/sweep`;
    core.fake.plan(answer);
    await assert.rejects(
      core.email.send(body('stuck'), authenticatedAs(caller), { idempotencyKey: key }),
      isMailroomError,
    );
    const record = await byKey(key);
    assert.equal(record && statusOf(record), 'pending');
    return record!;
  }

  before(async () => {
    core = await startEmailCore({ name: 'sweeper', env: { SENDGRID_WEBHOOK_ALLOW_UNSIGNED: 'true' } });
  });
  after(() => core.close());
  beforeEach(async () => {
    core.fake.reset();
    await emails().deleteMany({});
    // Not the block entries: the service's open block names the ids its next sends take.
    await inFlight().deleteMany({ ids: { $exists: false } });
  });

  it('fails old pending records with the reason, leaves young and finished ones alone, logs each', async () => {
    const neverSent = await leftPending(503);
    const maybeSent = await leftPending('accept-then-drop');
    const young = await leftPending(503);
    const sent = await core.email.send(body('sent'), authenticatedAs(caller));
    for (const id of [neverSent.email_id, maybeSent.email_id, sent.email_id])
      await backdate(id, PENDING_BOUND_MS + 60_000);

    const { logger, lines } = capturingLogger();
    const swept = await sweepStuckPending(createRecordStore(core.database.db), logger);

    assert.deepEqual(
      swept.map((s) => [s.email_id, s.outcome]).sort(),
      [
        [neverSent.email_id, 'abandoned'],
        [maybeSent.email_id, 'outcome_unknown'],
      ].sort(),
    );
    for (const s of swept) assert.ok(s.age_ms > PENDING_BOUND_MS);
    const abandoned = await emails().findOne({ _id: neverSent.email_id });
    assert.equal(statusOf(abandoned!), 'failed');
    assert.equal(
      abandoned?.error,
      'email send abandoned: still pending after 15 minutes and never handed to the provider.',
    );
    const unknown = await emails().findOne({ _id: maybeSent.email_id });
    assert.equal(statusOf(unknown!), 'failed');
    assert.equal(unknown?.error_kind, 'outcome_unknown');
    assert.match(String(unknown?.error), /^email outcome unknown: /);
    assert.equal(statusOf((await emails().findOne({ _id: young.email_id }))!), 'pending');
    assert.equal(statusOf((await emails().findOne({ _id: sent.email_id }))!), 'sent');

    const logged = lines.filter((l) => l['swept'] === true);
    assert.deepEqual(logged.map((l) => l['email_id']).sort(), swept.map((s) => s.email_id).sort());
    assert.ok(logged.every((l) => l['msg'] === 'stuck pending email swept'));

    // What stays in flight of the keyed sends: the young pending record alone. (The unkeyed
    // send's id came from a block, whose one entry goes a moment after: id-blocks.ts.)
    assert.deepEqual(
      (await inFlight().find({}).toArray()).filter((e) => !isBlockEntry(e)).map((e) => e._id),
      [young.email_id],
    );
    // A second sweep finds nothing left to do.
    assert.deepEqual(await sweepStuckPending(createRecordStore(core.database.db), logger), []);
    // The status endpoint shows the verdict.
    assert.equal((await core.email.getStatus(maybeSent.email_id, authenticatedAs(caller))).status, 'failed');
  });

  it('keeps only records in flight: a sent send leaves none, stale entries are dropped', async () => {
    const sent = await core.email.send(body('sent'), authenticatedAs(caller));
    // Its id's block entry goes once the block is retired (off the send's path): wait for it.
    const naming = () => inFlight().countDocuments({ ids: sent.email_id });
    assert.equal(await naming(), 1, 'named by its block while the block is in use');
    for (let i = 0; i < 250 && (await naming()) > 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(await naming(), 0);
    assert.equal(await inFlight().countDocuments({ _id: sent.email_id }), 0, 'no entry of its own');
    // Entries left behind: a record a provider event moved on, and a crash before the record's insert.
    const delivered = await leftPending('accept-then-drop');
    await emails().updateOne({ _id: delivered.email_id }, { $set: { status_rank: STATUS_RANK.delivered } });
    const orphan = randomUUID();
    await inFlight().insertOne({ _id: orphan, since: new Date() });
    for (const id of [delivered.email_id, orphan]) await backdate(id, PENDING_BOUND_MS + 1000);

    const { logger } = capturingLogger();
    assert.deepEqual(await sweepStuckPending(createRecordStore(core.database.db), logger), []);
    assert.equal(await inFlight().countDocuments({ ids: { $exists: false } }), 0);
  });

  it("a new send's record left pending by a crash is found through its block, then the block dropped", async () => {
    const sent = await core.email.send(body('template'), authenticatedAs(caller));
    const template = (await emails().findOne({ _id: sent.email_id }))!;
    // A gateway that inserted the record and died before the provider answered.
    const crashed = createRecordStore(core.database.db);
    const id = crashed.newEmailId();
    const longAgo = new Date(Date.now() - PENDING_BOUND_MS - 60_000);
    const record: EmailRecord = {
      ...template,
      _id: id,
      email_id: id,
      status_rank: STATUS_RANK.pending,
      provider_id: null,
      attempt_id: randomUUID(),
    };
    await crashed.insert(record);
    assert.equal(await inFlight().countDocuments({ _id: id }), 0, 'no entry of its own');
    const block = await inFlight().findOne({ ids: id });
    assert.ok(block && isBlockEntry(block));
    await inFlight().updateOne({ _id: block._id }, { $set: { since: longAgo } });
    await emails().updateOne({ _id: id }, { $set: { created_at: longAgo, updated_at: longAgo } });

    const { logger } = capturingLogger();
    const swept = await sweepStuckPending(createRecordStore(core.database.db), logger);
    assert.deepEqual(
      swept.map((s) => [s.email_id, s.outcome]),
      [[id, 'outcome_unknown']],
    );
    assert.equal(statusOf((await emails().findOne({ _id: id }))!), 'failed');
    // Nothing of the block pending any more: the next pass drops its entry.
    assert.deepEqual(await sweepStuckPending(createRecordStore(core.database.db), logger), []);
    assert.equal(await inFlight().countDocuments({ _id: block._id }), 0);
  });

  it('a pending record whose in-flight entry is refused is taken back, and the insert fails', async () => {
    const sent = await core.email.send(body('template'), authenticatedAs(caller));
    const record = (await emails().findOne({ _id: sent.email_id }))!;
    const copy: EmailRecord = { ...record, _id: randomUUID(), status_rank: STATUS_RANK.pending };
    copy.email_id = copy._id;
    // The database refuses the entry's insert alone (as a failover between the two commands would).
    const refused = new Error('in-flight insert refused');
    const db = core.database.db;
    const refusing = new Proxy(db, {
      get(target, prop) {
        if (prop !== 'collection') return Reflect.get(target, prop, target) as unknown;
        return (name: string) => {
          const collection = target.collection(name);
          if (name !== IN_FLIGHT_COLLECTION) return collection;
          return Object.assign(Object.create(collection) as typeof collection, {
            insertMany: () => Promise.reject(refused),
          });
        };
      },
    });
    await assert.rejects(createRecordStore(refusing).insert(copy), refused);
    assert.equal(await emails().countDocuments({ _id: copy._id }), 0, 'no record the sweeper could miss');
    // The retry with the same id, once the database takes both: the record and its entry.
    await createRecordStore(db).insert(copy);
    assert.equal(await emails().countDocuments({ _id: copy._id }), 1);
    assert.equal(await inFlight().countDocuments({ _id: copy._id }), 1);
  });

  it('the periodic task sweeps through the service and hands each swept record to onSwept', async () => {
    const stuck = await leftPending(503);
    await backdate(stuck.email_id, PENDING_BOUND_MS + 1000);
    const { logger } = capturingLogger();
    const counted: SweptRecord[] = [];
    const sweeper = startSweeper({
      sweep: () => core.email.sweepStuckPending(),
      logger,
      intervalMs: 20,
      onSwept: (r) => counted.push(r),
    });
    try {
      for (let i = 0; i < 500 && counted.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    } finally {
      await sweeper.stop();
    }
    assert.deepEqual(
      counted.map((c) => [c.email_id, c.outcome]),
      [[stuck.email_id, 'abandoned']],
    );
  });

  it('a sweep that throws (database down) is logged and the task keeps going', async () => {
    const { logger, lines } = capturingLogger();
    let calls = 0;
    const sweeper = startSweeper({
      sweep: async () => {
        calls++;
        if (calls === 1) throw new Error('database unavailable');
        return [];
      },
      logger,
      intervalMs: 10,
    });
    try {
      for (let i = 0; i < 500 && calls < 2; i++) await new Promise((r) => setTimeout(r, 10));
    } finally {
      await sweeper.stop();
    }
    assert.ok(calls >= 2);
    assert.ok(lines.some((l) => l['msg'] === 'sweeping stuck pending emails failed'));
  });
});
