import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { MailroomError } from './errors.ts';

/**
 * The one validator of untrusted input: request bodies, workflow inputs,
 * template variables and the environment all go through here, against the
 * TypeBox schemas that also give their TypeScript types and the OpenAPI
 * document. One ajv instance, each schema compiled once.
 *
 * `allErrors` so a caller learns every missing field at once; `verbose` so a
 * union can name the forms it accepts (its schema's `description`).
 */
const ajv = new Ajv({ allErrors: true, useDefaults: true, verbose: true, strict: false });
addFormats.default(ajv);

const compiled = new WeakMap<TSchema, ValidateFunction>();

function validatorFor<T extends TSchema>(schema: T): ValidateFunction<Static<T>> {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate as ValidateFunction<Static<T>>;
}

/**
 * Path parameters, query strings and headers arrive as strings: this instance
 * coerces them to the types their schemas declare (`?limit=10` → 10) while it
 * validates. Only for those: a JSON body's `"10"` stays a string, and wrong.
 */
const coercing = new Ajv({
  allErrors: true,
  useDefaults: true,
  verbose: true,
  strict: false,
  coerceTypes: true,
});
addFormats.default(coercing);
const compiledCoercing = new WeakMap<TSchema, ValidateFunction>();

/**
 * Limits of a field that are checked in code rather than by its schema
 * (core/email/validate.ts), so each failure gets the interface's own message
 * in a fixed precedence. Kept under this key, ajv leaves them alone
 * (`strict: false`), and the OpenAPI document states them as the JSON Schema
 * keywords they are (api/openapi/components.ts): one definition still
 * serves the check's constant, the reference and a generated client.
 */
export const CHECKED_IN_CODE = 'x-checked-in-code';

export function checkedInCode(limits: {
  minLength?: number;
  maxLength?: number;
  maxItems?: number;
  enum?: readonly string[];
}): Record<typeof CHECKED_IN_CODE, typeof limits> {
  return { [CHECKED_IN_CODE]: limits };
}

/** ajv's errors for `value` (none when valid); applies the schema's defaults to `value`. */
export function schemaErrors(schema: TSchema, value: unknown): readonly ErrorObject[] {
  const validate = validatorFor(schema);
  return validate(value) ? [] : (validate.errors ?? []);
}

/**
 * Returns the string fields of a request (its path parameters, query or
 * headers) typed by `schema`, coerced and with defaults applied, or throws a
 * validation MailroomError worded by `describe`. `value` is changed in place.
 */
export function parseStrings<T extends TSchema>(
  schema: T,
  value: object,
  describe: DescribeProblem,
): Static<T> {
  let validate = compiledCoercing.get(schema);
  if (!validate) {
    validate = coercing.compile(schema);
    compiledCoercing.set(schema, validate);
  }
  if (!validate(value)) throw new MailroomError('validation', describe(firstProblem(validate.errors ?? [])));
  return value as Static<T>;
}

/** What is wrong with a value, in words a caller can act on. */
export type Problem =
  | { kind: 'missing'; fields: string[] }
  | { kind: 'unknown'; field: string }
  | { kind: 'invalid'; field: string; problem: string; keyword?: string };

/** How each interface words a problem (its messages module decides). */
export type DescribeProblem = (problem: Problem) => string;

/**
 * Returns `value` typed by `schema` (defaults applied), or throws a validation
 * MailroomError worded by `describe`.
 */
export function parse<T extends TSchema>(schema: T, value: unknown, describe: DescribeProblem): Static<T> {
  const errors = schemaErrors(schema, value);
  if (errors.length > 0) throw new MailroomError('validation', describe(firstProblem(errors)));
  return value as Static<T>;
}

/**
 * The one problem to report, in a fixed precedence: unknown fields first
 * (usually typos), then every missing field of the shallowest object that
 * misses any, then the first other error.
 */
export function firstProblem(errors: readonly ErrorObject[]): Problem {
  const unknown = errors.find((e) => e.keyword === 'additionalProperties');
  if (unknown)
    return {
      kind: 'unknown',
      field: fieldPath(unknown.instancePath, String(unknown.params['additionalProperty'])),
    };
  // A union reports its branches' errors, then its own: the outermost union of
  // the shallowest field names every form it accepts.
  const unions = errors.filter((e) => e.keyword === 'anyOf');
  if (unions.length > 0) {
    const depth = Math.min(...unions.map((e) => e.instancePath.split('/').length));
    const union = unions.filter((e) => e.instancePath.split('/').length === depth).at(-1)!;
    return {
      kind: 'invalid',
      field: fieldPath(union.instancePath),
      problem: describeError(union),
      keyword: 'anyOf',
    };
  }
  const required = errors.filter((e) => e.keyword === 'required');
  if (required.length > 0) {
    const depth = Math.min(...required.map((e) => e.instancePath.split('/').length));
    const atDepth = required.filter((e) => e.instancePath.split('/').length === depth);
    const parent = atDepth[0]!.instancePath;
    return {
      kind: 'missing',
      fields: atDepth
        .filter((e) => e.instancePath === parent)
        .map((e) => fieldPath(e.instancePath, String(e.params['missingProperty']))),
    };
  }
  const first = errors[0];
  if (!first) return { kind: 'invalid', field: '', problem: 'is invalid' };
  return {
    kind: 'invalid',
    field: fieldPath(first.instancePath),
    problem: describeError(first),
    keyword: first.keyword,
  };
}

/** One error as a phrase: `must be a string`, `must be one of: a, b`, `must be a UUID`, … */
function describeError(err: ErrorObject): string {
  switch (err.keyword) {
    case 'anyOf': {
      const parent = err.parentSchema as { description?: unknown; anyOf?: unknown } | undefined;
      // A union of literals (an enum written as one) names its values.
      const values = Array.isArray(parent?.anyOf)
        ? (parent.anyOf as Array<{ const?: unknown }>).map((form) => form.const)
        : [];
      if (values.length > 0 && values.every((v) => typeof v === 'string' || typeof v === 'number'))
        return `must be one of: ${values.join(', ')}`;
      const forms = parent?.description;
      return typeof forms === 'string' ? `expected ${forms}` : 'is not one of the accepted forms';
    }
    case 'enum':
      return `must be one of: ${(err.params['allowedValues'] as unknown[]).join(', ')}`;
    case 'pattern': {
      // A described pattern says what it wants in words, never as a regular expression.
      const described = (err.parentSchema as { description?: unknown } | undefined)?.description;
      return typeof described === 'string' ? `must be ${described}` : (err.message ?? 'is invalid');
    }
    case 'format':
      return (
        FORMAT_PHRASES[String(err.params['format'])] ?? `must be a valid ${String(err.params['format'])}`
      );
    case 'type':
      return `must be ${withArticle(String(err.params['type']))}`;
    case 'minLength':
      return err.params['limit'] === 1
        ? 'must not be empty'
        : `must be at least ${String(err.params['limit'])} characters`;
    case 'maxLength':
      return `must be at most ${String(err.params['limit'])} characters`;
    case 'minItems':
      return `must contain at least ${String(err.params['limit'])} item(s)`;
    case 'maxItems':
      return `must contain at most ${String(err.params['limit'])} item(s)`;
    default:
      return err.message ?? 'is invalid';
  }
}

const FORMAT_PHRASES: Record<string, string> = {
  uuid: 'must be a UUID',
  email: 'must be a valid email address',
  uri: 'must be a URL',
};

function withArticle(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/**
 * A JSON pointer from ajv (`/attachments/0/filename`) as a client would name
 * the field (`attachments[0].filename`), optionally with a child appended
 * (ajv reports a missing property on its parent's path).
 */
export function fieldPath(instancePath: string, extra?: string): string {
  const parts = instancePath
    .split('/')
    .filter(Boolean)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (extra !== undefined) parts.push(extra);
  return parts.reduce((acc, p) => (/^\d+$/.test(p) ? `${acc}[${p}]` : acc ? `${acc}.${p}` : p), '');
}

export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Control characters a text or HTML body has no use for: C0 but tab, line
 * feed and carriage return, DEL and C1. A NUL cuts a message at some mail
 * servers; the others are parse errors in HTML.
 */
export function hasBodyControlCharacters(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if ((code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) || (code >= 0x7f && code <= 0x9f))
      return true;
  }
  return false;
}

/**
 * CR, LF and the other control characters (C0, DEL and C1, NEL among them)
 * and the Unicode line and paragraph separators have no business in ids or
 * in anything that becomes a header.
 */
export function hasControlCharacters(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === 0x2028 || code === 0x2029) return true;
  }
  return false;
}

/** `https://app.example.com` of an http(s) URL or origin; undefined for anything else. */
export function httpOrigin(value: string): string | undefined {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `Idempotency-Key` (workflow triggers, sends, bulks): one header of 1 to 255
 * printable ASCII characters (space to `~`). ASCII because Node reads a
 * header's bytes as latin1: a UTF-8 `é` would arrive as two characters, and a
 * `€` as a control character, so other characters cannot be kept as sent.
 */
export const IDEMPOTENCY_KEY_INVALID =
  'Idempotency-Key must be one header of 1 to 255 printable ASCII characters.';
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;
export const isValidIdempotencyKey = (key: string): boolean =>
  key.length <= IDEMPOTENCY_KEY_MAX_LENGTH && PRINTABLE_ASCII.test(key);

/** The same rule as a schema, for a route's `headers` (validation and the API reference). */
export const idempotencyKeySchema = (description: string) =>
  Type.String({
    minLength: 1,
    maxLength: IDEMPOTENCY_KEY_MAX_LENGTH,
    pattern: PRINTABLE_ASCII.source,
    description,
  });

/** A sender allow-list entry as stored: `Billing@Example.COM ` → `billing@example.com`. */
export function normalizeSenderEntry(entry: string): string {
  return entry.trim().toLowerCase();
}

/**
 * A sender allow-list entry (ALLOWED_SENDERS, `npm run keys -- senders`): a
 * domain (labels of letters, digits and hyphens) or an address at one.
 */
export function isSenderEntry(entry: string): boolean {
  const at = entry.lastIndexOf('@');
  const domain = at === -1 ? entry : entry.slice(at + 1);
  if (at === 0 || domain.length === 0 || domain.length > 253) return false;
  return domain
    .split('.')
    .every((label) => label.length > 0 && label.length <= 63 && /^[a-z0-9-]+$/i.test(label));
}
