import { ApplicationFailure } from '@temporalio/activity';
import { ObjectId, type Db, type Filter } from 'mongodb';
import type { EmailService } from '../core/email/contract.ts';
import { isUuid } from '../core/identity.ts';
import { withFailureMapping } from './failures.ts';
import { createWelcomeKeys } from './welcome-keys.ts';

/** A document of the `users` collection, where send-welcome-email finds its user. */
export interface UserDocument {
  _id: string | ObjectId;
  email: string;
  name?: string;
  /**
   * The company the user belongs to (its UUID, any case); `company_id` is
   * read the same way. A user that names a company is reachable only by runs
   * of that company; one that names none (a single-company deployment) by
   * every run.
   */
  companyId?: string | null;
  company_id?: string | null;
  welcomeEmailSent?: boolean;
  welcomeEmailSentAt?: Date;
  /** The run that reserved the welcome email (see claimUserWelcomeEmail); unset once sent or released. */
  welcomeEmailRunId?: string;
  welcomeEmailClaimedAt?: Date;
  /**
   * The idempotency key of the user's welcome email send. Kept across runs:
   * a run that takes over the claim sends under the same key, so whatever
   * an earlier run got to (sent, or maybe sent) is answered, never repeated.
   * Replaced only when that send failed without reaching the provider.
   */
  welcomeEmailKey?: string;
}

/**
 * The claim of the welcome email (claimUserWelcomeEmail): when it is ours, it
 * carries the key to send under and what the send needs of the user.
 */
export type UserWelcomeEmailClaim =
  | { claim: 'claimed'; idempotencyKey: string; email: string; name: string | null }
  | { claim: 'already-sent' | 'in-progress' };

/**
 * A claim older than this is abandoned (its run was terminated, say) and may
 * be taken over. Longer than any run can take: each step gives up after 5 min.
 */
export const WELCOME_CLAIM_TTL_MS = 15 * 60_000;

export const USERS_COLLECTION = 'users';

/**
 * Users are keyed by a string `_id`; a 24-hex id also matches an ObjectId
 * `_id` (users made by other tools), and a UUID matches its lower- and
 * upper-case spellings (the gateway hands runs UUIDs in lower case). The
 * spellings `_id` may have, in the order they are looked for.
 */
function idSpellings(userId: string): Array<string | ObjectId> {
  if (ObjectId.isValid(userId) && /^[0-9a-f]{24}$/i.test(userId)) return [userId, new ObjectId(userId)];
  if (isUuid(userId)) return [...new Set([userId, userId.toLowerCase(), userId.toUpperCase()])];
  return [userId];
}

/** The fields in which a user document may name its company. */
const COMPANY_FIELDS = ['companyId', 'company_id'] as const;

/**
 * Matches the users a run of company `companyId` (the run's caller, from its
 * memo) may reach: those that name no company in any of COMPANY_FIELDS
 * (absent, null or empty) and those whose company is `companyId`, compared
 * case-insensitively. A run without a company reaches only the former. Part
 * of every read and conditional write, so another company's user is exactly
 * an unknown user: `user not found: <id>`, never claimed, sent or flagged.
 */
function reachableBy(companyId: string | undefined): Filter<UserDocument> {
  // A UUID holds no regular-expression syntax: the pattern matches that literal id only.
  const ours = isUuid(companyId) ? [{ $regex: `^${companyId.toLowerCase()}$`, $options: 'i' }] : [];
  return {
    $and: COMPANY_FIELDS.map((field) => ({
      $or: [{ [field]: { $in: [null, ''] } }, ...ours.map((match) => ({ [field]: match }))],
    })),
  } as Filter<UserDocument>;
}

/** The same for unknown users and other companies' users, so neither can be told apart. */
const userNotFound = (userId: string) =>
  ApplicationFailure.nonRetryable(`user not found: ${userId}`, 'not_found');

/** A user document without an address to send to: said so, rather than the email API's field message. */
const userWithoutEmail = (userId: string) =>
  ApplicationFailure.nonRetryable(`user has no email address: ${userId}`, 'no_email');

/** Whether the user document holds an address (a non-empty string) to send the welcome email to. */
const hasEmail = (user: UserDocument): boolean => typeof user.email === 'string' && user.email.trim() !== '';

/** The stored name as the welcome email uses it: a non-empty string, else null. */
const nameOf = (user: UserDocument): string | null =>
  typeof user.name === 'string' && user.name ? user.name : null;

export function createUserActivities({ db, email }: { db: Db; email: EmailService }) {
  const users = db.collection<UserDocument>(USERS_COLLECTION);
  const successors = createWelcomeKeys(db);

  /**
   * The user `userId` by the `_id` it is stored under (idSpellings), found by
   * equality: FerretDB answers `_id: {$in: [...]}` with a scan of every user
   * (536 ms per lookup at 20,000 users, against 2 ms by equality), MongoDB
   * from the index either way. Matches nothing when no spelling is stored.
   */
  async function byUserId(userId: string): Promise<Filter<UserDocument>> {
    const spellings = idSpellings(userId);
    if (spellings.length > 1)
      for (const _id of spellings)
        if (await users.findOne({ _id }, { projection: { _id: 1 } })) return { _id };
    return { _id: spellings[0]! };
  }

  /** The user `userId`, if company `companyId`'s runs may reach it (reachableBy). */
  const reachableUser = async (
    userId: string,
    companyId: string | undefined,
  ): Promise<Filter<UserDocument>> => ({
    ...(await byUserId(userId)),
    ...reachableBy(companyId),
  });

  /**
   * The key that follows `previous` for this user, agreed through a unique
   * insert (welcome-keys.ts), and stored on the user when another run's
   * proposal won: on FerretDB two runs can both pass the conditional claim.
   */
  async function agreedKey(
    user: UserDocument,
    previous: string | undefined,
    proposed: string,
  ): Promise<string> {
    const key = await successors.successor(String(user._id), previous, proposed);
    if (key !== proposed)
      await users.updateOne({ _id: user._id, welcomeEmailKey: proposed }, { $set: { welcomeEmailKey: key } });
    return key;
  }

  /**
   * Matches the user (`user`: reachableUser's filter) while run `runId` may
   * claim its welcome email: not sent yet, and unclaimed, or claimed by this
   * very run (a retried attempt), or claimed by a run that abandoned it
   * WELCOME_CLAIM_TTL_MS ago.
   */
  const claimable = (user: Filter<UserDocument>, runId: string, now: Date): Filter<UserDocument> => ({
    ...user,
    // Nothing to send to: not claimed (notClaimed says why).
    email: { $type: 'string', $ne: '' },
    welcomeEmailSent: { $ne: true },
    $or: [
      { welcomeEmailRunId: { $exists: false } },
      { welcomeEmailRunId: runId },
      { welcomeEmailClaimedAt: { $lt: new Date(now.getTime() - WELCOME_CLAIM_TTL_MS) } },
    ],
  });

  /**
   * Why `userId` (found by `where`: reachableUser's filter) cannot be claimed:
   * sent, or another run holds it; unknown (or another company's) → non-retryable.
   */
  async function notClaimed(
    userId: string,
    where: Filter<UserDocument>,
  ): Promise<{ claim: 'already-sent' | 'in-progress' }> {
    const user = await users.findOne(where);
    if (!user) throw userNotFound(userId);
    if (user.welcomeEmailSent === true) return { claim: 'already-sent' };
    if (!hasEmail(user)) throw userWithoutEmail(userId);
    return { claim: 'in-progress' };
  }

  /**
   * The key this run sends the welcome email under: the user's key if an
   * earlier run left one whose send may have gone out (or is not finished),
   * else a new one for this run. Called by the claim holder only.
   */
  async function welcomeKey(user: UserDocument, runId: string): Promise<string> {
    const current = user.welcomeEmailKey;
    if (current !== undefined && !(await email.failedWithoutSending(current))) return current;
    const fresh = `${runId}:welcome-email`;
    if (fresh !== current)
      await users.updateOne(
        { _id: user._id, welcomeEmailRunId: runId },
        { $set: { welcomeEmailKey: fresh } },
      );
    return agreedKey(user, current, fresh);
  }

  return {
    /**
     * Reads the user and reserves its welcome email for run `runId` in one
     * step (a local activity), so two runs started together for the same user
     * cannot both send it (the flag alone is only set after the send).
     * Answers the user's address and name when the claim is ours;
     * `already-sent` when the flag is set, `in-progress` when another run
     * holds the claim; an unknown user fails with the non-retryable `user not
     * found: <id>`, and so does a user of another company than `companyId`,
     * the run's caller's (reachableBy).
     *
     * Atomic (conditional writes); idempotent for the same run, so a retried
     * attempt gets its own claim back. A claim left by a run that died or gave
     * up is taken over after WELCOME_CLAIM_TTL_MS, together with its send's
     * key (see welcomeKey): so the welcome email is never sent twice,
     * whichever step failed for good. A user's first claim is one write that
     * also records the send's key.
     */
    async claimUserWelcomeEmail(
      userId: string,
      runId: string,
      companyId: string | undefined,
    ): Promise<UserWelcomeEmailClaim> {
      return withFailureMapping(async () => {
        const now = new Date();
        const claim = { welcomeEmailRunId: runId, welcomeEmailClaimedAt: now };
        const fresh = `${runId}:welcome-email`;
        const user = await reachableUser(userId, companyId);
        const where = claimable(user, runId, now);
        const first = await users.findOneAndUpdate(
          { ...where, welcomeEmailKey: { $exists: false } },
          { $set: { ...claim, welcomeEmailKey: fresh } },
          { returnDocument: 'after' },
        );
        if (first)
          return {
            claim: 'claimed',
            idempotencyKey: await agreedKey(first, undefined, fresh),
            email: first.email,
            name: nameOf(first),
          };
        const again = await users.findOneAndUpdate(where, { $set: claim }, { returnDocument: 'after' });
        if (!again) return notClaimed(userId, user);
        return {
          claim: 'claimed',
          idempotencyKey: await welcomeKey(again, runId),
          email: again.email,
          name: nameOf(again),
        };
      });
    },

    /**
     * A test-mode run's read of the user: its address and name, nothing
     * claimed or set. The user's welcome fields are live data, which a test
     * run must not use up (docs/test-mode.md).
     */
    async readWelcomeUser(
      userId: string,
      companyId: string | undefined,
    ): Promise<{ email: string; name: string | null }> {
      return withFailureMapping(async () => {
        const user = await users.findOne(await reachableUser(userId, companyId));
        if (!user) throw userNotFound(userId);
        if (!hasEmail(user)) throw userWithoutEmail(userId);
        return { email: user.email, name: nameOf(user) };
      });
    },

    /**
     * The run gave up or was cancelled: let a later run send the welcome
     * email. The send's key stays: a later run reuses it unless that send
     * certainly did not go out.
     */
    async releaseWelcomeEmail(userId: string, runId: string): Promise<void> {
      return withFailureMapping(async () => {
        await users.updateOne(
          { ...(await byUserId(userId)), welcomeEmailRunId: runId },
          { $unset: { welcomeEmailRunId: '', welcomeEmailClaimedAt: '' } },
        );
      });
    },

    /**
     * Idempotent: setting the flag twice (a retried attempt) changes nothing a
     * reader can see. Another company's user (reachableBy) is never flagged.
     */
    async markWelcomeEmailSent(userId: string, companyId: string | undefined): Promise<void> {
      return withFailureMapping(async () => {
        const user = await reachableUser(userId, companyId);
        const res = await users.updateOne(
          { ...user, welcomeEmailSent: { $ne: true } },
          {
            $set: { welcomeEmailSent: true, welcomeEmailSentAt: new Date() },
            $unset: { welcomeEmailRunId: '', welcomeEmailClaimedAt: '' },
          },
        );
        if (res.matchedCount === 0 && !(await users.findOne(user))) {
          throw userNotFound(userId);
        }
      });
    },
  };
}
