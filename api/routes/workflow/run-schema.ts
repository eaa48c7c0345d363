import { Type, type Static } from '@sinclair/typebox';
import { idempotencyKeySchema } from '../../../core/validation.ts';

/**
 * The workflow interface's responses, as TypeBox schemas (types, the response
 * tests and the API reference). Request bodies are each workflow's own input
 * schema (core/workflows/<name>.input.ts).
 */

export const RUN_STATUSES = ['pending', 'running', 'completed', 'failed', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const WorkflowNameParams = Type.Object({ workflowName: Type.String() });
/** `?runId=`: required, at most 255 characters (a Temporal workflow id is never longer here). */
export const RunIdQuery = Type.Object({ runId: Type.String({ minLength: 1, maxLength: 255 }) });

/** A trigger's `Idempotency-Key`. */
export const TriggerHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    idempotencyKeySchema(
      'Repeating a trigger with the same key (same workflow, same `X-Company-Id`) lands on the same run ' +
        'instead of starting another: 202 with the same `runId`. One header of 1 to 255 printable ASCII characters.',
    ),
  ),
});

/** GET's query: the run, and how long to wait for it to end (1–60 s, default: answer at once). */
export const RunStatusQuery = Type.Object({
  runId: Type.String({ minLength: 1, maxLength: 255 }),
  wait: Type.Optional(Type.Integer({ minimum: 1, maximum: 60 })),
});

/** 202 of POST. */
export const TriggerResponseSchema = Type.Object({
  success: Type.Literal(true),
  runId: Type.String(),
  workflowName: Type.String(),
});

/** 200 of GET: the run. `result` is `{ result: <what the workflow returned> }` once completed. */
export const RunResponseSchema = Type.Object({
  success: Type.Literal(true),
  runId: Type.String(),
  workflowName: Type.String(),
  status: Type.Unsafe<RunStatus>(Type.String({ enum: [...RUN_STATUSES] })),
  /** Only once completed: the interface's "object or absent". */
  result: Type.Optional(Type.Object({ result: Type.Unknown() })),
  error: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
  /** Present while the run is pending or running: true once a cancellation was requested. */
  cancelRequested: Type.Optional(Type.Boolean()),
});
export type RunResponse = Static<typeof RunResponseSchema>;

/** 202 of DELETE: the run as it is when the cancellation was requested. */
export const CancelResponseSchema = Type.Object({
  success: Type.Literal(true),
  runId: Type.String(),
  workflowName: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('running')]),
  cancelRequested: Type.Literal(true),
});

/** One run of GET /api/workflow/:workflowName/runs: the run's status answer without `result`. */
export const RunListItemSchema = Type.Omit(RunResponseSchema, ['success', 'result']);
export type RunListItem = Static<typeof RunListItemSchema>;

/** 200 of GET /api/workflow/:workflowName/runs. */
export const RunListResponseSchema = Type.Object({
  success: Type.Literal(true),
  workflowName: Type.String(),
  runs: Type.Array(RunListItemSchema),
  /** The next page's `cursor`; null on the last page. */
  nextCursor: Type.Union([Type.String(), Type.Null()]),
});
