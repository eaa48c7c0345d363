import { Value } from '@sinclair/typebox/value';
import { MailroomError } from '../errors.ts';
import { isPlainObject, parse } from '../validation.ts';
import type { WorkflowDefinition } from './definition.ts';
import { BODY_NOT_OBJECT, describeInputProblem } from './messages.ts';

/**
 * Validates a trigger body against its workflow's input schema, before any run
 * starts. Unknown keys are dropped so a run's input (what the Web UI shows and
 * the history keeps) holds only what the workflow reads.
 */
export function validateWorkflowInput(def: WorkflowDefinition, body: unknown): Record<string, unknown> {
  if (!isPlainObject(body)) throw new MailroomError('validation', BODY_NOT_OBJECT);
  const normalized = def.normalize ? def.normalize(body) : { ...body };
  const input = Value.Clean(def.input, normalized) as Record<string, unknown>;
  return parse(def.input, input, describeInputProblem);
}
