import type { TObject } from '@sinclair/typebox';

/**
 * What the gateway needs to know of a workflow to start it and report on it.
 * Each workflow's `<name>.input.ts` exports one; the registry lists them.
 * Data only: the worker loads the workflow code itself (workflows/index.ts)
 * inside Temporal's sandbox, by `workflowType`.
 */
export interface WorkflowDefinition {
  /** The name in `/api/workflow/{workflowName}`. */
  name: string;
  /** The exported workflow function's name: Temporal's workflow type. */
  workflowType: string;
  /** JSON Schema (TypeBox) the body must satisfy before a run starts. */
  input: TObject;
  /** Maps accepted alternative spellings to the schema's keys before validation. */
  normalize?: (body: Record<string, unknown>) => Record<string, unknown>;
  /** What `result.result` holds when the run completed. */
  result: TObject;
  /** One line for the API reference: what the workflow does. */
  description: string;
}
