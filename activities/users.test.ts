import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { ObjectId } from 'mongodb';
import { connectDatabase, type Database } from '../core/db.ts';
import type { EmailService } from '../core/email/contract.ts';
import { mongoUri, uniqueName } from '../test/support/env.ts';
import { createUserActivities, USERS_COLLECTION, WELCOME_CLAIM_TTL_MS, type UserDocument } from './users.ts';

/**
 * The welcome email's claim on the real database (the step runs as a local
 * activity; here it is called directly). The email core is asked only which
 * earlier sends certainly failed without reaching the provider.
 */
let database: Database;
const neverSent = new Set<string>();
const email = {
  failedWithoutSending: async (key: string) => neverSent.has(key),
} as unknown as EmailService;

before(async () => {
  database = await connectDatabase(mongoUri(), uniqueName('users'));
});
after(async () => {
  await database.db.dropDatabase().catch(() => undefined);
  await database.close();
});

const users = () => database.db.collection<UserDocument>(USERS_COLLECTION);
const acts = () => createUserActivities({ db: database.db, email });
/** The company of the runs below (their caller's, from the memo). */
const COMPANY = randomUUID();

async function newUser(fields: Partial<UserDocument> = {}): Promise<string> {
  const _id = `user-${randomUUID()}`;
  await users().insertOne({ _id, email: `${_id}@example.com`, name: 'Ada', ...fields });
  return _id;
}

/** What a run whose claim was abandoned long ago leaves on the user. */
const abandon = (userId: string) =>
  users().updateOne(
    { _id: userId },
    { $set: { welcomeEmailClaimedAt: new Date(Date.now() - WELCOME_CLAIM_TTL_MS - 60_000) } },
  );

describe('claimUserWelcomeEmail (user read and claim in one step)', () => {
  it('claims a new user for the run, with a key of the run, and answers the address and name', async () => {
    const userId = await newUser();
    const claim = await acts().claimUserWelcomeEmail(userId, 'run-a', COMPANY);
    assert.deepEqual(claim, {
      claim: 'claimed',
      idempotencyKey: 'run-a:welcome-email',
      email: `${userId}@example.com`,
      name: 'Ada',
    });
    const stored = await users().findOne({ _id: userId });
    assert.equal(stored?.welcomeEmailRunId, 'run-a');
    assert.equal(stored?.welcomeEmailKey, 'run-a:welcome-email');
    // A retried attempt of the same run gets the same claim back.
    assert.deepEqual(await acts().claimUserWelcomeEmail(userId, 'run-a', COMPANY), claim);
  });

  it('another run gets in-progress while the claim is held, already-sent once the flag is set', async () => {
    const userId = await newUser({ name: '' });
    const claim = await acts().claimUserWelcomeEmail(userId, 'run-a', COMPANY);
    assert.equal(claim.claim === 'claimed' && claim.name, null, 'an empty name is no name');
    assert.deepEqual(await acts().claimUserWelcomeEmail(userId, 'run-b', COMPANY), { claim: 'in-progress' });
    await acts().markWelcomeEmailSent(userId, COMPANY);
    assert.deepEqual(await acts().claimUserWelcomeEmail(userId, 'run-b', COMPANY), { claim: 'already-sent' });
    assert.deepEqual(await acts().claimUserWelcomeEmail(userId, 'run-a', COMPANY), { claim: 'already-sent' });
    const stored = await users().findOne({ _id: userId });
    assert.equal(stored?.welcomeEmailSent, true);
    assert.equal(stored?.welcomeEmailRunId, undefined, 'the flag clears the claim');
  });

  it('a flagged user is already-sent without being claimed', async () => {
    const userId = await newUser({ welcomeEmailSent: true });
    assert.deepEqual(await acts().claimUserWelcomeEmail(userId, 'run-a', COMPANY), { claim: 'already-sent' });
    assert.equal((await users().findOne({ _id: userId }))?.welcomeEmailRunId, undefined);
  });

  it('an unknown user fails with the non-retryable `user not found: <id>`', async () => {
    await assert.rejects(acts().claimUserWelcomeEmail('nobody-here', 'run-a', COMPANY), (err: unknown) => {
      assert.ok(err instanceof ApplicationFailure);
      assert.equal(err.message, 'user not found: nobody-here');
      assert.equal(err.nonRetryable, true);
      return true;
    });
  });

  it('a user with no address fails with the non-retryable `user has no email address: <id>`, unclaimed', async () => {
    for (const fields of [{ email: undefined }, { email: '' }, { email: 42 as unknown as string }]) {
      const userId = await newUser(fields);
      for (const step of [
        () => acts().claimUserWelcomeEmail(userId, 'run-a', COMPANY),
        () => acts().readWelcomeUser(userId, COMPANY),
      ])
        await assert.rejects(step(), (err: unknown) => {
          assert.ok(err instanceof ApplicationFailure);
          assert.equal(err.message, `user has no email address: ${userId}`);
          assert.equal(err.nonRetryable, true);
          return true;
        });
      const user = await users().findOne({ _id: userId });
      assert.equal(user?.welcomeEmailRunId, undefined, 'not claimed');
    }
  });

  it('a test-mode read answers the address and name and changes nothing', async () => {
    const userId = await newUser();
    assert.deepEqual(await acts().readWelcomeUser(userId, COMPANY), {
      email: `${userId}@example.com`,
      name: 'Ada',
    });
    const user = await users().findOne({ _id: userId });
    assert.deepEqual(Object.keys(user!).sort(), ['_id', 'email', 'name']);
    await assert.rejects(acts().readWelcomeUser('nobody-here', COMPANY), /user not found: nobody-here/);
  });

  it('finds a user whose _id is an ObjectId by its 24-hex id', async () => {
    const _id = new ObjectId();
    await users().insertOne({ _id, email: 'oid@example.com' });
    const claim = await acts().claimUserWelcomeEmail(_id.toHexString(), 'run-a', COMPANY);
    assert.equal(claim.claim === 'claimed' && claim.email, 'oid@example.com');
  });

  it('a run taking over an abandoned claim sends under the earlier run’s key', async () => {
    const userId = await newUser();
    await acts().claimUserWelcomeEmail(userId, 'run-a', COMPANY);
    assert.deepEqual(await acts().claimUserWelcomeEmail(userId, 'run-b', COMPANY), { claim: 'in-progress' });
    await abandon(userId);
    const claim = await acts().claimUserWelcomeEmail(userId, 'run-b', COMPANY);
    assert.equal(claim.claim === 'claimed' && claim.idempotencyKey, 'run-a:welcome-email');
    assert.equal((await users().findOne({ _id: userId }))?.welcomeEmailRunId, 'run-b');
  });

  it('a released claim is taken at once; a new key only when the earlier send certainly never went out', async () => {
    const userId = await newUser();
    await acts().claimUserWelcomeEmail(userId, 'run-a', COMPANY);
    await acts().releaseWelcomeEmail(userId, 'run-a');
    const b = await acts().claimUserWelcomeEmail(userId, 'run-b', COMPANY);
    assert.equal(b.claim === 'claimed' && b.idempotencyKey, 'run-a:welcome-email', 'may have gone out');

    await acts().releaseWelcomeEmail(userId, 'run-b');
    neverSent.add('run-a:welcome-email');
    const c = await acts().claimUserWelcomeEmail(userId, 'run-c', COMPANY);
    assert.equal(c.claim === 'claimed' && c.idempotencyKey, 'run-c:welcome-email');
    assert.equal((await users().findOne({ _id: userId }))?.welcomeEmailKey, 'run-c:welcome-email');
  });
});

describe('users of another company (the document’s companyId / company_id)', () => {
  /** What a run's step answers for a user it may not reach: exactly an unknown user's failure. */
  const notFound = (userId: string) => (err: unknown) => {
    assert.ok(err instanceof ApplicationFailure);
    assert.equal(err.message, `user not found: ${userId}`);
    assert.equal(err.type, 'not_found');
    assert.equal(err.nonRetryable, true);
    return true;
  };

  it('a run of company A cannot claim, read or flag a user whose document names company B', async () => {
    const companyB = randomUUID();
    for (const field of ['companyId', 'company_id'] as const) {
      const userId = await newUser({ [field]: companyB });
      const before = await users().findOne({ _id: userId });
      await assert.rejects(acts().claimUserWelcomeEmail(userId, 'run-a', COMPANY), notFound(userId));
      await assert.rejects(acts().markWelcomeEmailSent(userId, COMPANY), notFound(userId));
      // Nothing of B's user was touched: no claim, no send key, no flag.
      assert.deepEqual(await users().findOne({ _id: userId }), before, field);
      // An unknown id fails the same way, so existence cannot be probed.
      await assert.rejects(
        acts().claimUserWelcomeEmail(`${userId}-x`, 'run-a', COMPANY),
        notFound(`${userId}-x`),
      );
    }
  });

  it('a run of the user’s own company reaches it, the ids compared case-insensitively', async () => {
    const upper = await newUser({ companyId: COMPANY.toUpperCase() });
    const claim = await acts().claimUserWelcomeEmail(upper, 'run-a', COMPANY);
    assert.equal(claim.claim, 'claimed');
    await acts().markWelcomeEmailSent(upper, COMPANY);
    assert.equal((await users().findOne({ _id: upper }))?.welcomeEmailSent, true);

    const snake = await newUser({ company_id: COMPANY });
    const bySnake = await acts().claimUserWelcomeEmail(snake, 'run-a', COMPANY.toUpperCase());
    assert.equal(bySnake.claim === 'claimed' && bySnake.email, `${snake}@example.com`);
  });

  it('a user naming no company (single-company deployments) is reached by every run; one naming a company only by its own', async () => {
    for (const fields of [{}, { companyId: null }, { company_id: '' }] as Array<Partial<UserDocument>>) {
      const userId = await newUser(fields);
      assert.equal((await acts().claimUserWelcomeEmail(userId, 'run-a', randomUUID())).claim, 'claimed');
      // A run without a company (none in its memo) too.
      assert.equal((await acts().claimUserWelcomeEmail(userId, 'run-a', undefined)).claim, 'claimed');
    }
    const owned = await newUser({ companyId: COMPANY });
    await assert.rejects(acts().claimUserWelcomeEmail(owned, 'run-a', undefined), notFound(owned));
    // Both fields naming different companies: nobody's.
    const torn = await newUser({ companyId: COMPANY, company_id: randomUUID() });
    await assert.rejects(acts().claimUserWelcomeEmail(torn, 'run-a', COMPANY), notFound(torn));
  });

  it('a UUID user id finds its user stored in lower or upper case', async () => {
    const id = randomUUID();
    await users().insertOne({ _id: id.toUpperCase(), email: 'upper@example.com' });
    const claim = await acts().claimUserWelcomeEmail(id, 'run-a', COMPANY);
    assert.equal(claim.claim === 'claimed' && claim.email, 'upper@example.com');
  });

  it('reads and writes users by _id equality only: FerretDB scans every user for _id $in', async () => {
    const watched = await connectDatabase(mongoUri(), database.db.databaseName, { monitorCommands: true });
    const filters: unknown[] = [];
    watched.client.on('commandStarted', ({ command }) => {
      if (command['find'] === USERS_COLLECTION) filters.push(command['filter']);
      if (command['findAndModify'] === USERS_COLLECTION) filters.push(command['query']);
      if (command['update'] === USERS_COLLECTION)
        for (const u of command['updates'] as Array<{ q: unknown }>) filters.push(u.q);
    });
    try {
      const watchedActs = createUserActivities({ db: watched.db, email });
      const id = randomUUID();
      await users().insertOne({ _id: id.toUpperCase(), email: 'upper@example.com' });
      const objectId = new ObjectId();
      await users().insertOne({ _id: objectId as unknown as string, email: 'oid@example.com' });
      for (const userId of [id, objectId.toHexString()]) {
        const claim = await watchedActs.claimUserWelcomeEmail(userId, 'run-eq', COMPANY);
        assert.equal(claim.claim, 'claimed');
        await watchedActs.readWelcomeUser(userId, COMPANY);
        await watchedActs.releaseWelcomeEmail(userId, 'run-eq');
        await watchedActs.markWelcomeEmailSent(userId, COMPANY);
      }
      assert.ok(filters.length >= 8, `${filters.length} commands seen`);
      const byIn = filters.filter((f) =>
        JSON.stringify((f as { _id?: unknown })._id ?? null).includes('$in'),
      );
      assert.deepEqual(byIn, []);
      assert.equal((await users().findOne({ _id: id.toUpperCase() }))?.welcomeEmailSent, true);
    } finally {
      await watched.close();
    }
  });
});
