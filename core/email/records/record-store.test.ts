import { after, before, beforeEach, describe, it } from 'node:test';
import { authenticatedAs } from '../../identity.ts';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { CommandStartedEvent, Document } from 'mongodb';
import { isMailroomError } from '../../errors.ts';
import type { FakeSendGrid } from '../../../test/support/fake-sendgrid.ts';
import { startEmailCore, type EmailCore } from '../../../test/support/email-core.ts';
import type { EmailService } from '../contract.ts';
import type { Caller } from '../../identity.ts';
import { STATUS_RANK, type EmailRecord } from './record.ts';
import { IN_FLIGHT_COLLECTION, type InFlightEntry } from './in-flight.ts';
import { newViewKey } from '../tracking/view-key.ts';
import { clickTokens } from '../tracking/click-token.ts';
import { welcomeBody } from '../../../test/support/sample-emails.ts';

/**
 * Regression guard for the access path of `emails`: FerretDB 1.24 (SQLite)
 * uses an index only to select by a top-level `_id` equality (upstream only
 * when the filter is exactly `{ _id: X }`; our build also when other
 * conditions stand beside it, infra/ferretdb/README.md); anything else
 * decodes every record (at 5,000 records a send took ~0.5 s per update).
 * With 20,000 records in place (a grown database: a scan there takes
 * seconds, an `_id` lookup a millisecond), every command the email core sends
 * to `emails` (and to `suppressions` and `email_requests`, read on the send
 * path) is watched on the wire (driver command monitoring) and must select
 * by a plain `_id` value; then each distinct filter seen is `explain`ed on
 * that collection, and the plan must use the `_id` index (FerretDB answers
 * SQLite's plan, `SEARCH … USING INDEX …__id_`; MongoDB names its `_id`
 * plan). No timing assertions: the property is the query shape and the
 * plan, which hold or fail the same on any machine.
 */

const SEEDED = 20_000;
/** What a plan that selects by the `_id` index says, on FerretDB (SQLite) or MongoDB. */
const ID_INDEX_PLAN = /USING INDEX \S+__id_|IDHACK|"indexName":"_id_"|EXPRESS/;
const FILTERED = ['find', 'update', 'findAndModify', 'delete', 'count', 'distinct', 'aggregate'];
/** The collections a send, a replay or an event touches: records, suppressions, idempotency keys. */
const WATCHED = ['emails', 'suppressions', 'email_requests', 'email_idempotency', IN_FLIGHT_COLLECTION];

const caller: Caller = { companyId: randomUUID(), organizationId: randomUUID(), userId: randomUUID() };
const body = (subject = 'Welcome') =>
  welcomeBody({ to: { email: 'user@example.com', name: 'User' }, subject });

/** A record as a send leaves it, owned by `caller`'s company. */
function seededRecord(i: number): EmailRecord {
  const id = randomUUID();
  const at = new Date(Date.now() - (SEEDED - i) * 1000);
  return {
    _id: id,
    email_id: id,
    created_at: at,
    updated_at: at,
    subject: `Seeded ${i}`,
    recipient_email: `user${i}@example.com`,
    recipient_name: `User ${i}`,
    recipients: { to: [{ email: `user${i}@example.com`, name: `User ${i}` }], cc: [], bcc: [] },
    status_rank: STATUS_RANK.sent,
    template_id: 'welcome',
    opened: false,
    delivered: false,
    clicked: false,
    view_key: newViewKey(id),
    resource_type_ref: null,
    resource_id_ref: null,
    time: null,
    company_id: caller.companyId ?? null,
    organization_id: caller.organizationId ?? null,
    user_id: caller.userId ?? null,
    provider_id: `seeded-${i}`,
    error: null,
    error_kind: null,
    tags: [],
    locale: 'en',
    language: 'en',
    sent_at: at,
  };
}

/** The filter(s) a command applies, or undefined for commands that don't filter (insert, createIndexes…). */
function filtersOf(event: CommandStartedEvent): Document[] | undefined {
  const c = event.command;
  switch (event.commandName) {
    case 'find':
      return [c['filter'] ?? {}];
    case 'update':
      return (c['updates'] as Document[]).map((u) => u['q'] as Document);
    case 'delete':
      return (c['deletes'] as Document[]).map((d) => d['q'] as Document);
    case 'findAndModify':
      return [c['query'] ?? {}];
    case 'count':
    case 'distinct':
      return [c['query'] ?? {}];
    case 'aggregate':
      return [{ $pipeline: c['pipeline'] }];
    default:
      return undefined;
  }
}

describe('the send path and events: every query selects by _id', () => {
  let core: EmailCore;
  let fake: FakeSendGrid;
  let email: EmailService;
  let seen: { command: string; collection: string; filter: Document }[] = [];
  let watching = false;
  const seeded: EmailRecord[] = [];

  before(async () => {
    core = await startEmailCore({
      name: 'email_access',
      monitorCommands: true,
      env: { SENDGRID_WEBHOOK_ALLOW_UNSIGNED: 'true' },
    });
    ({ fake, email } = core);
    const db = core.database.db;
    core.database.client.on('commandStarted', (event) => {
      if (!watching || event.databaseName !== db.databaseName) return;
      if (!FILTERED.includes(event.commandName) || !WATCHED.includes(event.command[event.commandName]))
        return;
      const collection = event.command[event.commandName] as string;
      for (const filter of filtersOf(event) ?? [])
        seen.push({ command: event.commandName, collection, filter });
    });
    // Batches of 1,000: the fastest size measured on FerretDB (bench/records-fill.ts).
    for (let i = 0; i < SEEDED; i += 1000) {
      const batch = Array.from({ length: Math.min(1000, SEEDED - i) }, (_, j) => seededRecord(i + j));
      await db.collection<EmailRecord>('emails').insertMany(batch);
      seeded.push(...batch);
      // What grows beside the records (other companies' entries): the plans below are on full collections.
      await db
        .collection<{ _id: string }>('suppressions')
        .insertMany(
          batch.slice(0, 100).map((r) => ({ _id: `${randomUUID()}/${r.recipient_email}`, reason: 'bounce' })),
        );
      await db
        .collection<{ _id: string }>('email_requests')
        .insertMany(
          batch.slice(0, 100).map((r) => ({ _id: `${randomUUID()}/order-${r._id}`, state: 'done' })),
        );
      await db
        .collection<{ _id: string }>('email_idempotency')
        .insertMany(batch.slice(0, 300).map((r) => ({ _id: `wf-${r._id}:send`, email_id: r._id })));
    }
    // Not a count: on FerretDB that decodes all 20,000 records.
    assert.ok(await db.collection<EmailRecord>('emails').findOne({ _id: seeded.at(-1)!._id }));
    // The plan check can fail: a filter without `_id` is not planned on the `_id` index.
    const scan = await db.command({
      explain: { find: 'emails', filter: { view_key: seeded[0]!.view_key } },
      verbosity: 'queryPlanner',
    });
    assert.doesNotMatch(JSON.stringify(scan), ID_INDEX_PLAN);
  });
  after(async () => {
    watching = false;
    await core.close();
  });
  beforeEach(() => {
    fake.reset();
    seen = [];
    watching = true;
  });

  /**
   * What ran against `emails` since the test began: at least one command, each
   * selecting by a plain `_id` (other conditions may stand beside it), and
   * each filter, explained as a find on its collection, planned on the `_id` index.
   */
  async function assertOnlyIdFilters(expectedIds?: string[], exceptOn?: string) {
    watching = false;
    assert.ok(seen.length > 0, 'the operation read or wrote emails');
    const explained = new Set<string>();
    for (const { command, collection, filter } of seen) {
      if (collection === exceptOn) continue;
      const shown = `${command} ${collection} ${JSON.stringify(filter)}`;
      assert.ok(Object.keys(filter).includes('_id'), shown);
      assert.equal(typeof filter['_id'], 'string', shown);
      if (expectedIds) assert.ok(expectedIds.includes(filter['_id'] as string), shown);
      const key = `${collection} ${JSON.stringify(filter)}`;
      if (explained.has(key)) continue;
      explained.add(key);
      const plan = await core.database.db.command({
        explain: { find: collection, filter },
        verbosity: 'queryPlanner',
      });
      assert.match(JSON.stringify(plan), ID_INDEX_PLAN, shown);
    }
  }

  const last = () => seeded[seeded.length - 1]!;

  it('a status lookup', async () => {
    const status = await email.getStatus(last().email_id, authenticatedAs(caller));
    assert.equal(status.email_id, last().email_id);
    assert.equal(status.status, 'sent');
    const unknown = randomUUID();
    await assert.rejects(email.getStatus(unknown, authenticatedAs(caller)), (err) => isMailroomError(err));
    // Another company's caller: same `_id` read, refused in code.
    await assert.rejects(
      email.getStatus(last().email_id, authenticatedAs({ ...caller, companyId: randomUUID() })),
      (err) => isMailroomError(err) && err.kind === 'not_found',
    );
    await assertOnlyIdFilters([last().email_id, unknown]);
  });

  it('a pixel open and a tracking event, known and unknown keys', async () => {
    const target = seeded[SEEDED - 2]!;
    await email.recordOpen(target.view_key);
    await email.recordOpen(newViewKey(randomUUID()));
    await email.recordOpen(newViewKey(target.email_id));
    await email.flushOpens();
    await email.recordEvent({ view_key: target.view_key, event_type: 'delivered' });
    const status = await email.getStatus(target.email_id, authenticatedAs(caller));
    assert.equal(status.opened, true);
    assert.equal(status.delivered, true);
    assert.equal(status.status, 'opened');
    assert.ok(seen.filter((s) => s.command === 'update').length >= 2);
    await assertOnlyIdFilters();
    assert.ok(seen.some((s) => s.filter['_id'] === target.email_id));
  });

  it('a tracked-link click, for a known and an unknown email', async () => {
    const target = seeded[SEEDED - 4]!;
    const tokens = clickTokens(core.config.secret);
    const unknown = randomUUID();
    assert.equal(
      await email.followClick(tokens.sign(target.email_id, 'https://a.example/')!),
      'https://a.example/',
    );
    await email.followClick(tokens.sign(unknown, 'https://a.example/')!);
    await email.flushOpens();
    const stored = await core.database.db.collection<EmailRecord>('emails').findOne({ _id: target.email_id });
    assert.equal(stored?.clicked, true);
    assert.equal(stored?.opened, true);
    await assertOnlyIdFilters([target.email_id, unknown]);
  });

  it('a send, a provider rejection, and webhook events', async () => {
    const sent = await email.send(body(), authenticatedAs(caller));
    fake.plan(400);
    await assert.rejects(email.send(body('rejected'), authenticatedAs(caller)), (err) =>
      isMailroomError(err),
    );
    const webhookTarget = seeded[SEEDED - 3]!;
    const { applied } = await email.handleSendGridWebhook(
      JSON.stringify([
        { event: 'delivered', email_id: sent.email_id, timestamp: 1 },
        { event: 'bounce', email_id: webhookTarget.email_id, timestamp: 1 },
        { event: 'open', email_id: randomUUID(), timestamp: 1 },
      ]),
      {},
    );
    assert.equal(applied, 2);
    assert.equal((await email.getStatus(sent.email_id, authenticatedAs(caller))).status, 'delivered');
    assert.equal((await email.getStatus(webhookTarget.email_id, authenticatedAs(caller))).status, 'bounced');
    assert.ok(seen.some((s) => s.filter['_id'] === sent.email_id && s.command === 'update'));
    await assertOnlyIdFilters();
  });

  it('keyed sends: transient failure, retry, replay, give up, reset', async () => {
    const key = `wf-${randomUUID()}/activity-1`;
    fake.plan(503);
    await assert.rejects(email.send(body(), authenticatedAs(caller), { idempotencyKey: key }), (err) =>
      isMailroomError(err),
    );
    const retried = await email.send(body(), authenticatedAs(caller), { idempotencyKey: key });
    const replay = await email.send(body(), authenticatedAs(caller), { idempotencyKey: key });
    assert.deepEqual(replay, retried);
    assert.equal(fake.accepted.length, 1);

    const abandoned = `wf-${randomUUID()}/activity-2`;
    fake.plan(503);
    await assert.rejects(email.send(body(), authenticatedAs(caller), { idempotencyKey: abandoned }));
    await email.markFailed(abandoned, 'gave up');
    // The step again after giving up (a reset run): the same record is sent.
    const reset = await email.send(body(), authenticatedAs(caller), { idempotencyKey: abandoned });
    assert.equal((await email.getStatus(reset.email_id, authenticatedAs(caller))).status, 'sent');
    assert.equal(fake.received.length, 4);
    await assertOnlyIdFilters();
    assert.ok(seen.some((s) => s.filter['_id'] === retried.email_id && s.command === 'update'));
  });

  it('a send leaving out a suppressed recipient, and a provider event that suppresses', async () => {
    const principal = authenticatedAs(caller);
    await email.suppressions.add(caller.companyId!, { email: 'gone@example.com' });
    seen = [];
    const sent = await email.send(
      welcomeBody({ to: ['gone@example.com', 'kept@example.com'], subject: 'Hi' }),
      principal,
    );
    assert.deepEqual(sent.suppressed, [{ email: 'gone@example.com', reason: 'manual' }]);
    const target = seeded[SEEDED - 5]!;
    await email.handleSendGridWebhook(
      JSON.stringify([
        { event: 'bounce', email: target.recipient_email, email_id: target.email_id, timestamp: 1 },
      ]),
      {},
    );
    assert.equal((await email.suppressions.get(caller.companyId!, target.recipient_email)).reason, 'bounce');
    await assertOnlyIdFilters();
    assert.ok(seen.some((s) => s.filter['_id'] === `${caller.companyId}/gone@example.com`));
  });

  it('an idempotent send and bulk, and their replays', async () => {
    const principal = authenticatedAs(caller);
    const key = `order-${randomUUID()}`;
    const once = () =>
      email.once(principal, { key, kind: 'send', body: body(), run: () => email.send(body(), principal) });
    const first = await once();
    const replay = await once();
    assert.deepEqual(replay, { result: first.result, replayed: true });
    const bulk = { batchDelay: 0, emails: [body('one'), body('two')] };
    const bulkOnce = () =>
      email.once(principal, {
        key: `${key}-bulk`,
        kind: 'bulk',
        body: bulk,
        run: () => email.sendBulk(bulk, principal),
      });
    await bulkOnce();
    assert.equal((await bulkOnce()).replayed, true);
    assert.equal(fake.accepted.length, 3);
    await assertOnlyIdFilters();
  });

  it('the sweeper: reads the in-flight entries, then each record by _id', async () => {
    const db = core.database.db;
    watching = false;
    const stuck = seeded[100]!;
    await db
      .collection<EmailRecord>('emails')
      .updateOne({ _id: stuck._id }, { $set: { status_rank: STATUS_RANK.pending } });
    const inFlight = db.collection<InFlightEntry>(IN_FLIGHT_COLLECTION);
    await inFlight.insertOne({ _id: stuck._id, since: stuck.created_at });
    watching = true;
    const swept = await email.sweepStuckPending();
    assert.deepEqual(
      swept.map((s) => s.email_id),
      [stuck.email_id],
    );
    assert.equal((await email.getStatus(stuck.email_id, authenticatedAs(caller))).status, 'failed');
    // The one filter not by `_id` is on the in-flight entries: the records pending now (other
    // tests' failed sends), not the 20,000 records.
    const scans = seen.filter((s) => s.collection === IN_FLIGHT_COLLECTION && !('_id' in s.filter));
    assert.equal(scans.length, 1, JSON.stringify(scans));
    const entries = await inFlight.find({}, { projection: { _id: 1 } }).toArray();
    assert.ok(entries.length < 20, `${entries.length} entries in flight`);
    assert.ok(!entries.some((e) => e._id === stuck._id));
    await assertOnlyIdFilters(undefined, IN_FLIGHT_COLLECTION);
  });

  it("a suppression listing page: the company's `_id` range, limit + 1 entries", async () => {
    // A company of its own: the other tests suppress addresses of `caller`'s.
    const company = randomUUID();
    for (const address of ['a@list.example', 'b@list.example', 'c@list.example'])
      await email.suppressions.add(company, { email: address });
    // Each page's find, as plain values (the driver hands the sort over as a Map).
    const finds: { filter: string; sort: string; limit: unknown }[] = [];
    const watch = (event: CommandStartedEvent) => {
      const c = event.command;
      if (event.commandName !== 'find' || c['find'] !== 'suppressions') return;
      const sort = c['sort'] instanceof Map ? Object.fromEntries(c['sort']) : c['sort'];
      finds.push({ filter: JSON.stringify(c['filter']), sort: JSON.stringify(sort), limit: c['limit'] });
    };
    core.database.client.on('commandStarted', watch);
    try {
      const first = await email.suppressions.list(company, { limit: 2 });
      assert.deepEqual(
        first.data.map((e) => e.email),
        ['a@list.example', 'b@list.example'],
      );
      const second = await email.suppressions.list(company, { limit: 2, after: first.next });
      assert.deepEqual(
        second.data.map((e) => e.email),
        ['c@list.example'],
      );
    } finally {
      core.database.client.off('commandStarted', watch);
    }
    // Each page asks for one company's ids past the cursor, at most limit + 1 of them: no
    // other company's entry and never a whole list come back, however large the collection.
    assert.deepEqual(finds, [
      {
        filter: JSON.stringify({ _id: { $gt: `${company}/`, $lt: `${company}0` } }),
        sort: '{"_id":1}',
        limit: 3,
      },
      {
        filter: JSON.stringify({ _id: { $gt: `${company}/b@list.example`, $lt: `${company}0` } }),
        sort: '{"_id":1}',
        limit: 3,
      },
    ]);
  });
});
