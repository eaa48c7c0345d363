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
    const claim = await acts().claimUserWelcomeEmail(userId, 'run-a');
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
    assert.deepEqual(await acts().claimUserWelcomeEmail(userId, 'run-a'), claim);
  });

  it('another run gets in-progress while the claim is held, already-sent once the flag is set', async () => {
    const userId = await newUser({ name: '' });
    const claim = await acts().claimUserWelcomeEmail(userId, 'run-a');
    assert.equal(claim.claim === 'claimed' && claim.name, null, 'an empty name is no name');
    assert.deepEqual(await acts().claimUserWelcomeEmail(userId, 'run-b'), { claim: 'in-progress' });
    await acts().markWelcomeEmailSent(userId);
    assert.deepEqual(await acts().claimUserWelcomeEmail(userId, 'run-b'), { claim: 'already-sent' });
    assert.deepEqual(await acts().claimUserWelcomeEmail(userId, 'run-a'), { claim: 'already-sent' });
    const stored = await users().findOne({ _id: userId });
    assert.equal(stored?.welcomeEmailSent, true);
    assert.equal(stored?.welcomeEmailRunId, undefined, 'the flag clears the claim');
  });

  it('a flagged user is already-sent without being claimed', async () => {
    const userId = await newUser({ welcomeEmailSent: true });
    assert.deepEqual(await acts().claimUserWelcomeEmail(userId, 'run-a'), { claim: 'already-sent' });
    assert.equal((await users().findOne({ _id: userId }))?.welcomeEmailRunId, undefined);
  });

  it('an unknown user fails with the non-retryable `user not found: <id>`', async () => {
    await assert.rejects(acts().claimUserWelcomeEmail('nobody-here', 'run-a'), (err: unknown) => {
      assert.ok(err instanceof ApplicationFailure);
      assert.equal(err.message, 'user not found: nobody-here');
      assert.equal(err.nonRetryable, true);
      return true;
    });
  });

  it('finds a user whose _id is an ObjectId by its 24-hex id', async () => {
    const _id = new ObjectId();
    await users().insertOne({ _id, email: 'oid@example.com' });
    const claim = await acts().claimUserWelcomeEmail(_id.toHexString(), 'run-a');
    assert.equal(claim.claim === 'claimed' && claim.email, 'oid@example.com');
  });

  it('a run taking over an abandoned claim sends under the earlier run’s key', async () => {
    const userId = await newUser();
    await acts().claimUserWelcomeEmail(userId, 'run-a');
    assert.deepEqual(await acts().claimUserWelcomeEmail(userId, 'run-b'), { claim: 'in-progress' });
    await abandon(userId);
    const claim = await acts().claimUserWelcomeEmail(userId, 'run-b');
    assert.equal(claim.claim === 'claimed' && claim.idempotencyKey, 'run-a:welcome-email');
    assert.equal((await users().findOne({ _id: userId }))?.welcomeEmailRunId, 'run-b');
  });

  it('a released claim is taken at once; a new key only when the earlier send certainly never went out', async () => {
    const userId = await newUser();
    await acts().claimUserWelcomeEmail(userId, 'run-a');
    await acts().releaseWelcomeEmail(userId, 'run-a');
    const b = await acts().claimUserWelcomeEmail(userId, 'run-b');
    assert.equal(b.claim === 'claimed' && b.idempotencyKey, 'run-a:welcome-email', 'may have gone out');

    await acts().releaseWelcomeEmail(userId, 'run-b');
    neverSent.add('run-a:welcome-email');
    const c = await acts().claimUserWelcomeEmail(userId, 'run-c');
    assert.equal(c.claim === 'claimed' && c.idempotencyKey, 'run-c:welcome-email');
    assert.equal((await users().findOne({ _id: userId }))?.welcomeEmailKey, 'run-c:welcome-email');
  });
});
