import { WorkflowNotFoundError } from '@temporalio/client';
import { failedTo, RUN_NOT_FOUND } from '../../../core/workflows/workflow-messages.ts';
import { HttpError } from '../../http-error.ts';

/** gRPC status NOT_FOUND, e.g. a malformed run id the server cannot find. */
const GRPC_NOT_FOUND = 5;
/** gRPC status DEADLINE_EXCEEDED: no answer before the call's deadline (api/temporal-deadlines.ts). */
const GRPC_DEADLINE_EXCEEDED = 4;

/** The longest 500 message: one line, whatever the cause says. */
export const MAX_ERROR_LENGTH = 300;
/** How deep the cause chain is followed (it may even loop). */
const MAX_CAUSE_DEPTH = 8;

/**
 * Temporal failures the client did not cause become 500 `{success:false,
 * error}` with the cause in the message ("message carries the cause"); an
 * unknown workflow id becomes 404.
 */
export function temporalError(err: unknown, doing: Parameters<typeof failedTo>[0]): Error {
  if (err instanceof HttpError) return err;
  if (err instanceof WorkflowNotFoundError || isGrpcNotFound(err)) return new HttpError(404, RUN_NOT_FOUND);
  return new HttpError(500, bounded(failedTo(doing, causeOf(err))));
}

/**
 * The most specific message in the cause chain: the SDK's own message
 * ("Failed to start Workflow") only wraps the gRPC error that says what went
 * wrong (`14 UNAVAILABLE: … ECONNREFUSED …`, `4 DEADLINE_EXCEEDED: …`). One
 * line, never a stack trace.
 */
function causeOf(err: unknown): string {
  const seen = new Set<unknown>();
  let deepest: string | undefined;
  let deadlineExceeded = false;
  for (let e = err, depth = 0; e != null && depth < MAX_CAUSE_DEPTH && !seen.has(e); depth++) {
    seen.add(e);
    const message = messageOf(e);
    if (message) deepest = message;
    if (isRecord(e) && e['code'] === GRPC_DEADLINE_EXCEEDED) deadlineExceeded = true;
    e = isRecord(e) ? e['cause'] : undefined;
  }
  const cause = deepest ?? 'unknown error';
  // The gRPC text ("Deadline exceeded after 0.000s") times the last retry, not the wait.
  return deadlineExceeded ? `Temporal did not answer before the deadline (${cause})` : cause;
}

/** An error's own message (a gRPC error's details when it has none), as one line without stack frames. */
function messageOf(e: unknown): string {
  const text = !isRecord(e)
    ? String(e)
    : typeof e['message'] === 'string' && e['message']
      ? e['message']
      : e['details'];
  if (typeof text !== 'string') return '';
  const lines: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (/^\s*at\s/.test(line)) break;
    lines.push(line);
  }
  return lines.join(' ').replace(/\s+/g, ' ').trim();
}

function bounded(message: string): string {
  return message.length <= MAX_ERROR_LENGTH ? message : `${message.slice(0, MAX_ERROR_LENGTH - 1)}…`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function isGrpcNotFound(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === GRPC_NOT_FOUND;
}
