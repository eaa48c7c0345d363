import { ApplicationFailure } from '@temporalio/activity';
import { ObjectId, type Db, type Filter } from 'mongodb';
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
}

export type WelcomeEmailClaim = 'claimed' | 'already-sent' | 'in-progress';

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

export function createUserActivities({ db }: { db: Db }) {
  const users = db.collection<UserDocument>(USERS_COLLECTION);
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
     * the same run, so a retried attempt gets its own claim back.
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
        if (res.matchedCount === 1) return 'claimed';
        const user = await users.findOne(byUserId(userId));
        if (!user) throw ApplicationFailure.nonRetryable(`user not found: ${userId}`, 'not_found');
        return user.welcomeEmailSent === true ? 'already-sent' : 'in-progress';
      });
    },

    /** The run gave up or was cancelled: let a later run send the welcome email. */
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
