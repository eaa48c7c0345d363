import { WorkflowNotFoundError } from '@temporalio/client';
import { failedTo, RUN_NOT_FOUND } from '../../../core/workflows/workflow-messages.ts';
import { HttpError } from '../../http-error.ts';

/** How long the gateway waits on Temporal before answering 500 (instead of hanging the client). */
export const TEMPORAL_DEADLINE_MS = 10_000;

/** gRPC status NOT_FOUND, e.g. a malformed run id the server cannot find. */
const GRPC_NOT_FOUND = 5;

/**
 * Temporal failures the client did not cause become 500 `{success:false,
 * error}` with the cause in the message ("message carries the cause"); an
 * unknown workflow id becomes 404.
 */
export function temporalError(err: unknown, doing: Parameters<typeof failedTo>[0]): Error {
  if (err instanceof HttpError) return err;
  if (err instanceof WorkflowNotFoundError || isGrpcNotFound(err)) return new HttpError(404, RUN_NOT_FOUND);
  const message = err instanceof Error ? err.message : String(err);
  return new HttpError(500, failedTo(doing, message));
}

function isGrpcNotFound(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === GRPC_NOT_FOUND;
}
