import { ApplicationFailure } from '@temporalio/activity';
import { MongoNetworkError, MongoServerSelectionError, MongoNetworkTimeoutError } from 'mongodb';
import { isMailroomError } from '../core/errors.ts';

/**
 * Turns what the email core and the database throw into what Temporal's retry
 * policy understands: `transient` failures and an
 * unreachable database are retried with backoff; validation, auth, unknown
 * templates or users and provider 4xx are non-retryable and fail the run with
 * their own message. The failure `type` is the error kind, so the Web UI and
 * the history show why an attempt failed.
 */
export function toActivityFailure(err: unknown): unknown {
  if (err instanceof ApplicationFailure) return err;
  if (isMailroomError(err)) {
    return ApplicationFailure.create({
      message: err.message,
      type: err.kind,
      nonRetryable: !err.retryable,
      // Every provider at its sending rate: the next attempt waits as long as the rate says.
      ...(err.retryable && err.retryAfterSeconds !== undefined
        ? { nextRetryDelay: Math.ceil(err.retryAfterSeconds * 1000) }
        : {}),
    });
  }
  if (
    err instanceof MongoServerSelectionError ||
    err instanceof MongoNetworkError ||
    err instanceof MongoNetworkTimeoutError
  ) {
    return ApplicationFailure.retryable(`database unavailable: ${err.message}`, 'transient');
  }
  // Anything else is unexpected: let Temporal retry it (the bounded policy
  // still ends the run) rather than guess it is permanent.
  return err;
}

/** Runs `fn`, rethrowing its failure as Temporal should see it. */
export async function withFailureMapping<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toActivityFailure(err);
  }
}
