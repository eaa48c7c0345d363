import { WorkflowNotFoundError } from '@temporalio/client';
import { HttpError } from '../../errors.ts';

/** How long the gateway waits on Temporal before answering 500 (instead of hanging the client). */
export const TEMPORAL_DEADLINE_MS = 10_000;

export const RUN_NOT_FOUND = 'workflow run not found';

/**
 * Temporal failures the client did not cause become 500 `{success:false,
 * error}` with the cause in the message (seed: "message carries the cause");
 * an unknown workflow id becomes 404.
 */
export function temporalError(err: unknown, doing: string): Error {
  if (err instanceof HttpError) return err;
  if (err instanceof WorkflowNotFoundError || isGrpcNotFound(err)) return new HttpError(404, RUN_NOT_FOUND);
  const message = err instanceof Error ? err.message : String(err);
  return new HttpError(500, `${doing}: ${message}`);
}

function isGrpcNotFound(err: unknown): boolean {
  // gRPC status 5 = NOT_FOUND, e.g. a malformed run id the server cannot find.
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 5;
}
