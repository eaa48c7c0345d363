import type { Problem } from '../validation.ts';
import { missingRequiredFields } from '../email/email-messages.ts';

/**
 * Every error message the workflow interface answers with, in one place.
 * The interface's own: an unknown workflow names it, an unknown run, a GET
 * without runId; the rest settle what it leaves open, in its style (lower
 * case, no full stop, the cause after a colon).
 */

export const workflowNotFound = (name: string): string => `workflow '${name}' not found`;
export const RUN_NOT_FOUND = 'workflow run not found';
export const RUN_ID_REQUIRED = 'runId query parameter is required';
export const RUN_ALREADY_CLOSED = 'workflow run is already closed';
export const BODY_NOT_OBJECT = 'request body must be a JSON object';
export const conflictingFields = (alias: string, canonical: string): string =>
  `conflicting fields: ${alias} and ${canonical}`;
export const notTheCaller = (key: string): string => `${key} does not match the authenticated caller`;
export const RUN_ID_TOO_LONG = 'runId must be at most 255 characters';
export const CURSOR_INVALID = 'cursor is invalid';
export const SCHEDULE_NOT_FOUND = 'schedule not found';
export const SCHEDULE_SPEC_REQUIRED = 'exactly one of cron and every is required';
export const TIMEZONE_INVALID = 'timezone must be an IANA time zone name, e.g. Europe/Berlin';
export const scheduleInvalid = (cause: string): string => `schedule is not valid: ${cause}`;
/** 409 when a company already holds the most schedules of a workflow it may (api/routes/schedules/collection.ts). */
export const tooManySchedules = (workflowName: string, max: number): string =>
  `a company may hold at most ${max} schedules of ${workflowName}; delete one first`;
export const everyTooShort = (seconds: number): string => `every must be at least ${seconds} seconds`;
export const EVERY_INVALID = 'every must be a number followed by s, m, h or d, e.g. 1h';
export const WAIT_INVALID = 'wait must be a whole number of seconds from 1 to 60';
export const controlCharacters = (field: string): string => `${field} must not contain control characters`;
export const invalidAddress = (field: string): string => `${field} must be a valid email address`;
export const blockedAddress = (field: string): string =>
  `${field} is in a blocked domain: emails to this domain are not allowed`;
export const tooManyAddresses = (fields: readonly string[], max: number): string =>
  `${fields.join(' and ')} must contain at most ${max} addresses together`;

/** 500s carry the cause ("message carries the cause"). */
export const failedTo = (
  doing:
    'start workflow' | 'read workflow run' | 'list workflow runs' | 'cancel workflow run' | 'manage schedule',
  cause: string,
) => `failed to ${doing}: ${cause}`;

/** A failed run's `error` when nothing deeper explains it, and the prefixes saying who ended it. */
export const WORKFLOW_FAILED = 'workflow failed';
export const workflowTerminated = (cause: string): string => `workflow terminated: ${cause}`;
export const workflowTimedOut = (cause: string): string => `workflow timed out: ${cause}`;

/** A problem with `?runId=` (GET, DELETE): missing or empty, else too long. */
export const describeRunIdProblem = (problem: Problem): string =>
  problem.kind === 'invalid' && problem.keyword === 'maxLength' ? RUN_ID_TOO_LONG : RUN_ID_REQUIRED;

/** A problem with GET's query: `wait` (1–60), else `runId`'s. */
export const describeRunStatusProblem = (problem: Problem): string =>
  problem.kind === 'invalid' && problem.field.endsWith('wait') ? WAIT_INVALID : describeRunIdProblem(problem);

/** A schema problem of a trigger body, in this interface's words. */
export function describeInputProblem(problem: Problem): string {
  switch (problem.kind) {
    case 'missing':
      return missingRequiredFields(problem.fields);
    case 'unknown':
      return `unknown field: ${problem.field}`;
    case 'invalid':
      return `${problem.field || 'body'} ${problem.problem}`;
  }
}
