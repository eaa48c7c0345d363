import { ApplicationFailure } from '@temporalio/activity';
import { ObjectId, type Db, type Filter } from 'mongodb';
import type { EmailService } from '../core/email/contract.ts';
import { withFailureMapping } from './failures.ts';

/** A document of the `users` collection, where send-welcome-email finds its user. */
export interface UserDocument {
  _id: string | ObjectId;
  email: string;
  name?: string;
  welcomeEmailSent?: boolean;
  welcomeEmailSentAt?: Date;
  /** The run that reserved the welcome email (see claimWelcomeEmail); unset once sent or released. */
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

export type WelcomeEmailClaimStatus = 'claimed' | 'already-sent' | 'in-progress';

/** A claim, with the key to send the welcome email under when it is ours. */
export type WelcomeEmailClaim =
  { claim: 'claimed'; idempotencyKey: string } | { claim: Exclude<WelcomeEmailClaimStatus, 'claimed'> };

/**
 * A claim older than this is abandoned (its run was terminated, say) and may
 * be taken over. Longer than any run can take: each step gives up after 5 min.
 */
export const WELCOME_CLAIM_TTL_MS = 15 * 60_000;

/** What the workflow needs of a user: plain JSON, it goes into the history. */
export interface UserSummary {
  userId: string;
  email: string;
  name: string | null;
  welcomeEmailSent: boolean;
}

export const USERS_COLLECTION = 'users';

/** Users are keyed by a string `_id`; a 24-hex id also matches an ObjectId `_id` (users made by other tools). */
function byUserId(userId: string): Filter<UserDocument> {
  return ObjectId.isValid(userId) && /^[0-9a-f]{24}$/i.test(userId)
    ? { _id: { $in: [userId, new ObjectId(userId)] } }
    : { _id: userId };
}

export function createUserActivities({ db, email }: { db: Db; email: EmailService }) {
  const users = db.collection<UserDocument>(USERS_COLLECTION);

  /**
   * The key this run sends the welcome email under: the user's key if an
   * earlier run left one whose send may have gone out (or is not finished),
   * else a new one for this run. Called by the claim holder only.
   */
  async function welcomeKey(userId: string, runId: string, current: string | undefined): Promise<string> {
    if (current !== undefined && !(await email.failedWithoutSending(current))) return current;
    const fresh = `${runId}:welcome-email`;
    if (fresh !== current)
      await users.updateOne(
        { ...byUserId(userId), welcomeEmailRunId: runId },
        { $set: { welcomeEmailKey: fresh } },
      );
    return fresh;
  }

  return {
    /** Unknown user → non-retryable `user not found: <id>`: waiting will not create it. */
    async getUser(userId: string): Promise<UserSummary> {
      return withFailureMapping(async () => {
        const user = await users.findOne(byUserId(userId));
        if (!user) throw ApplicationFailure.nonRetryable(`user not found: ${userId}`, 'not_found');
        return {
          userId,
          email: user.email,
          name: typeof user.name === 'string' && user.name ? user.name : null,
          welcomeEmailSent: user.welcomeEmailSent === true,
        };
      });
    },

    /**
     * Reserves the user's welcome email for run `runId`, so two runs started
     * together for the same user cannot both send it (the flag alone is only
     * set after the send). Atomic (one conditional update); idempotent for
     * the same run, so a retried attempt gets its own claim back. A claim
     * left by a run that died or gave up is taken over after
     * WELCOME_CLAIM_TTL_MS, together with its send's key (see welcomeKey):
     * so the welcome email is never sent twice, whichever step failed for good.
     */
    async claimWelcomeEmail(userId: string, runId: string): Promise<WelcomeEmailClaim> {
      return withFailureMapping(async () => {
        const now = new Date();
        const res = await users.updateOne(
          {
            ...byUserId(userId),
            welcomeEmailSent: { $ne: true },
            $or: [
              { welcomeEmailRunId: { $exists: false } },
              { welcomeEmailRunId: runId },
              { welcomeEmailClaimedAt: { $lt: new Date(now.getTime() - WELCOME_CLAIM_TTL_MS) } },
            ],
          },
          { $set: { welcomeEmailRunId: runId, welcomeEmailClaimedAt: now } },
        );
        const user = await users.findOne(byUserId(userId));
        if (!user) throw ApplicationFailure.nonRetryable(`user not found: ${userId}`, 'not_found');
        if (res.matchedCount === 1)
          return { claim: 'claimed', idempotencyKey: await welcomeKey(userId, runId, user.welcomeEmailKey) };
        return { claim: user.welcomeEmailSent === true ? 'already-sent' : 'in-progress' };
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
          { ...byUserId(userId), welcomeEmailRunId: runId },
          { $unset: { welcomeEmailRunId: '', welcomeEmailClaimedAt: '' } },
        );
      });
    },

    /** Idempotent: setting the flag twice (a retried attempt) changes nothing a reader can see. */
    async markWelcomeEmailSent(userId: string): Promise<void> {
      return withFailureMapping(async () => {
        const res = await users.updateOne(
          { ...byUserId(userId), welcomeEmailSent: { $ne: true } },
          {
            $set: { welcomeEmailSent: true, welcomeEmailSentAt: new Date() },
            $unset: { welcomeEmailRunId: '', welcomeEmailClaimedAt: '' },
          },
        );
        if (res.matchedCount === 0 && !(await users.findOne(byUserId(userId)))) {
          throw ApplicationFailure.nonRetryable(`user not found: ${userId}`, 'not_found');
        }
      });
    },
  };
}
