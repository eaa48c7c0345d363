import { Value } from '@sinclair/typebox/value';
import { MailroomError } from '../errors.ts';
import { isPlainObject, parse } from '../validation.ts';
import type { Caller, IdentityField } from '../identity.ts';
import type { WorkflowDefinition } from './definition.ts';
import { applyInputRules } from './input-rules.ts';
import { BODY_NOT_OBJECT, describeInputProblem, notTheCaller } from './workflow-messages.ts';

/**
 * Validates a trigger body against its workflow's input schema and the rules
 * every input follows (input-rules.ts), before any run starts. Unknown keys
 * are dropped so a run's input (what the Web UI shows and the history keeps)
 * holds only what the workflow reads. `blockedDomains`: BLOCKED_EMAIL_DOMAINS,
 * applied to recipient addresses as a send would.
 */
export function validateWorkflowInput(
  def: WorkflowDefinition,
  body: unknown,
  caller: Caller,
  { blockedDomains = [] }: { blockedDomains?: readonly string[] } = {},
): Record<string, unknown> {
  if (!isPlainObject(body)) throw new MailroomError('validation', BODY_NOT_OBJECT);
  const normalized = def.normalize ? def.normalize(body) : { ...body };
  const input = Value.Clean(def.input, normalized) as Record<string, unknown>;
  const valid = parse(def.input, input, describeInputProblem);
  assertActsAsCaller(def, valid, caller);
  return applyInputRules(def, valid, blockedDomains);
}

/**
 * The run acts as its caller: the identity ids a body must name (required,
 * like any input field: missing → 400) must be the caller's, else 403, so
 * nobody sends as another company or user by writing their ids into a body.
 */
function assertActsAsCaller(def: WorkflowDefinition, body: Record<string, unknown>, caller: Caller): void {
  for (const [field, key] of Object.entries(def.identityFields ?? {}) as Array<[IdentityField, string]>) {
    const own = caller[field];
    const named = body[key];
    if (own === undefined || typeof named !== 'string') continue;
    if (named.toLowerCase() !== own.toLowerCase()) throw new MailroomError('forbidden', notTheCaller(key));
  }
}
