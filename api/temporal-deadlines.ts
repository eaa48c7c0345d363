import type { AsyncLocalStorage } from 'node:async_hooks';
import {
  Connection,
  defaultGrpcRetryOptions,
  makeGrpcRetryInterceptor,
  type ConnectionOptions,
} from '@temporalio/client';

/**
 * The gateway's connection to Temporal, and deadlines for its calls, without
 * an AsyncLocalStorage. The SDK's Connection keeps each call's context (its
 * deadline, abort signal and metadata) in one, and enters it for every RPC
 * (the `temporal-namespace` header is added that way); on Node 20 the first
 * `run()` of any AsyncLocalStorage turns an async hook on for the rest of the
 * process: every promise, timer and socket write of every request pays for
 * it from then on. One `GET /ready` or one workflow call was enough.
 * Measured on the gateway process, CPU per request before and after one
 * `/ready`: a click 48.9 → 63.1 µs, `/health` 54 → 73 µs, a status read
 * 114 → 125 µs (docs/benchmarks.md).
 *
 * Instead:
 * - {@link GatewayConnection} gives the SDK a call context that lasts for the
 *   synchronous part of the call it scopes, which is where the SDK reads it:
 *   the namespace header's scope wraps the generated service method, which
 *   builds its gRPC call before returning. (So the SDK's `withDeadline`,
 *   `withAbortSignal` and `withMetadata` around an async function would not
 *   reach RPCs made after its first `await`: the gateway uses none of them.)
 * - every RPC on that connection gets a deadline from a gRPC interceptor, by
 *   method ({@link callDeadlineMs}), so no call waits for ever on a Temporal
 *   that accepted the connection and never answers;
 * - {@link withinDeadline} answers its caller at its own deadline with the
 *   error the SDK's deadline gives (gRPC code 4, DEADLINE_EXCEEDED), which
 *   routes/workflow/temporal-errors.ts words as "Temporal did not answer
 *   before the deadline"; the RPC itself ends at its interceptor deadline.
 */

/** The gateway's deadline for one Temporal call before it answers 500 (and what each RPC gets). */
export const TEMPORAL_DEADLINE_MS = 10_000;

/**
 * The history long poll (waiting for a run to close: `?wait=`) is answered by
 * Temporal within its own long-poll interval (20 s by default, then an empty
 * page and the caller polls again): its RPC may last that long.
 */
export const LONG_POLL_DEADLINE_MS = 30_000;

const LONG_POLL_METHOD = '/temporal.api.workflowservice.v1.WorkflowService/GetWorkflowExecutionHistory';

export interface DeadlineOptions {
  /** Every RPC but the history long poll (default TEMPORAL_DEADLINE_MS). */
  callMs?: number;
  /** GetWorkflowExecutionHistory (default LONG_POLL_DEADLINE_MS). */
  longPollMs?: number;
}

type Interceptor = NonNullable<ConnectionOptions['interceptors']>[number];

/** The deadline an RPC of `path` (`/package.Service/Method`) is given when its caller set none. */
function callDeadlineMs(path: string, options: DeadlineOptions = {}): number {
  return path === LONG_POLL_METHOD
    ? (options.longPollMs ?? LONG_POLL_DEADLINE_MS)
    : (options.callMs ?? TEMPORAL_DEADLINE_MS);
}

/** A gRPC interceptor giving each call without a deadline its method's ({@link callDeadlineMs}). */
function deadlineInterceptor(options: DeadlineOptions = {}): Interceptor {
  return (callOptions, nextCall) => {
    const given = callOptions.deadline;
    const unset = given === undefined || given === Infinity;
    const deadline = Date.now() + callDeadlineMs(callOptions.method_definition.path, options);
    // nextCall's call is what the interceptor chain expects back (grpc-js composes them so).
    return nextCall(unset ? { ...callOptions, deadline } : callOptions) as ReturnType<Interceptor>;
  };
}

/**
 * What the SDK's Connection needs of an AsyncLocalStorage (`run`, `getStore`,
 * `disable`), scoped to `run`'s synchronous extent. Safe to share: JavaScript
 * runs one synchronous extent at a time, and each restores what it replaced.
 */
class SyncCallContext<T> {
  private store: T | undefined;

  getStore(): T | undefined {
    return this.store;
  }

  run<R>(store: T, fn: () => R): R {
    const outer = this.store;
    this.store = store;
    try {
      return fn();
    } finally {
      this.store = outer;
    }
  }

  disable(): void {
    this.store = undefined;
  }
}

type CtorOptions = Parameters<typeof Connection.lazy>[0] & object;
/** The SDK types its call context as an AsyncLocalStorage; SyncCallContext has what it uses. */
const callContext = new SyncCallContext() as unknown as AsyncLocalStorage<never>;

/** The SDK's Connection with {@link SyncCallContext} in place of its AsyncLocalStorage. */
class GatewayConnection extends Connection {
  protected static override createCtorOptions(options: CtorOptions) {
    return { ...super.createCtorOptions(options), callContextStorage: callContext };
  }

  protected static override generateRPCImplementation(
    options: Parameters<typeof Connection.generateRPCImplementation>[0],
  ) {
    return super.generateRPCImplementation({ ...options, callContextStorage: callContext });
  }
}

/**
 * The gateway's connection to Temporal: lazy (the gateway starts while
 * Temporal is down), no AsyncLocalStorage, every RPC under a deadline, and
 * the SDK's default retries of transient gRPC failures inside it.
 */
export function gatewayTemporalConnection(address: string, options: DeadlineOptions = {}): Connection {
  return GatewayConnection.lazy({
    address,
    interceptors: [deadlineInterceptor(options), makeGrpcRetryInterceptor(defaultGrpcRetryOptions())],
  });
}

/** What the SDK's deadline throws, as temporal-errors.ts reads it: gRPC code 4 in the cause chain. */
class TemporalDeadlineError extends Error {
  readonly code = 4;
  constructor(ms: number) {
    super(`4 DEADLINE_EXCEEDED: no answer within ${(ms / 1000).toFixed(1)}s`);
    this.name = 'TemporalDeadlineError';
  }
}

/**
 * `call()`'s result, or a {@link TemporalDeadlineError} once `ms` (the
 * gateway's 10 s unless given) have passed: a step of several RPCs answers
 * within it, and so does a shorter deadline (a scheduled send's start). The
 * call goes on until its RPC's own deadline; its outcome is then ignored.
 */
export async function withinDeadline<T>(call: () => Promise<T>, ms = TEMPORAL_DEADLINE_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TemporalDeadlineError(ms)), ms);
  });
  const running = call();
  // Past the deadline nobody awaits the call: its late failure is not an unhandled rejection.
  running.catch(() => undefined);
  try {
    return await Promise.race([running, expired]);
  } finally {
    clearTimeout(timer);
  }
}
