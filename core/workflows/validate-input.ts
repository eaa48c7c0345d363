import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { MailroomError } from '../errors.ts';
import { missingRequiredFields } from '../email/messages.ts';
import { fieldPath } from '../field-path.ts';
import { InputConflictError } from './send-email-received-ein.ts';
import type { WorkflowDefinition } from './registry.ts';

/**
 * Validates a trigger body against its workflow's input schema, before any run
 * starts. Unknown keys are dropped (removeAdditional) so a run's input — what
 * the Web UI shows and the history keeps — holds only what the workflow reads.
 */
const ajv = new Ajv({ allErrors: true, removeAdditional: 'all', strict: false });
addFormats.default(ajv);
const compiled = new WeakMap<object, ValidateFunction>();

export function validateWorkflowInput(def: WorkflowDefinition, body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new MailroomError('validation', 'request body must be a JSON object');
  }
  let input: Record<string, unknown>;
  try {
    input = def.normalise
      ? def.normalise(body as Record<string, unknown>)
      : { ...(body as Record<string, unknown>) };
  } catch (err) {
    if (err instanceof InputConflictError) throw new MailroomError('validation', err.message);
    throw err;
  }
  let validate = compiled.get(def.input);
  if (!validate) {
    validate = ajv.compile({ ...def.input, additionalProperties: false });
    compiled.set(def.input, validate);
  }
  if (!validate(input)) throw new MailroomError('validation', describeErrors(validate.errors ?? []));
  return input;
}

/** The first message a client can act on: all missing fields at once, else the first bad field. */
export function describeErrors(errors: ErrorObject[]): string {
  const missing = errors
    .filter((e) => e.keyword === 'required' && e.instancePath === '')
    .map((e) => String(e.params['missingProperty']));
  if (missing.length) return missingRequiredFields(missing);
  const err = errors[0];
  if (!err) return 'invalid input';
  const field = fieldPath(err.instancePath);
  switch (err.keyword) {
    case 'enum':
      return `${field} must be one of: ${(err.params['allowedValues'] as unknown[]).join(', ')}`;
    case 'format':
      return err.params['format'] === 'uuid'
        ? `${field} must be a UUID`
        : `${field} must be a valid email address`;
    case 'type':
      return `${field} must be ${article(String(err.params['type']))}`;
    case 'minLength':
      return `${field} must not be empty`;
    case 'minItems':
      return `${field} must contain at least ${String(err.params['limit'])} item(s)`;
    default:
      return `${field} ${err.message ?? 'is invalid'}`;
  }
}

function article(type: string): string {
  return type === 'array' || type === 'object' || type === 'integer' ? `an ${type}` : `a ${type}`;
}
