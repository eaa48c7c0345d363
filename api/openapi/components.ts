import type { TSchema } from '@sinclair/typebox';
import {
  BulkBodySchema,
  BulkResponseSchema,
  SendBodySchema,
  SendResponseSchema,
  StatusResponseSchema,
  TrackBodySchema,
} from '../../core/email/email-schema.ts';
import { CHECKED_IN_CODE } from '../../core/validation.ts';
import { ErrorResponseSchema, OkResponseSchema } from '../route.ts';
import { CancelResponseSchema, TriggerResponseSchema } from '../routes/workflow/run-schema.ts';

/** The OpenAPI document's shared parts: named schemas (`components.schemas`) and JSON helpers. */

/** A piece of the OpenAPI document, as JSON. */
export type Json = Record<string, unknown>;

export const JSON_TYPE = 'application/json';

/** Schemas listed once under `components.schemas` and referenced by name. */
const NAMED_SCHEMAS: ReadonlyArray<readonly [TSchema, string]> = [
  [ErrorResponseSchema, 'ErrorResponse'],
  [SendBodySchema, 'SendEmailRequest'],
  [SendResponseSchema, 'SendEmailResponse'],
  [BulkBodySchema, 'SendBulkEmailRequest'],
  [BulkResponseSchema, 'SendBulkEmailResponse'],
  [StatusResponseSchema, 'EmailStatusResponse'],
  [TrackBodySchema, 'TrackEventRequest'],
  [OkResponseSchema, 'OkResponse'],
  [TriggerResponseSchema, 'TriggerWorkflowResponse'],
  [CancelResponseSchema, 'CancelWorkflowResponse'],
];

/** `components.schemas`, filled as schemas are used: each named schema once, referenced by `$ref`. */
export class Components {
  readonly schemas: Record<string, Json> = {};
  private readonly names = new Map<TSchema, string>(NAMED_SCHEMAS.map(([s, n]) => [s, n]));

  /** Gives `schema` a component name (idempotent). */
  name(schema: TSchema, name: string): TSchema {
    if (!this.names.has(schema)) this.names.set(schema, name);
    return schema;
  }

  /** A `$ref` for a named schema (added to the components the first time), else the schema inline. */
  use(schema: TSchema): Json {
    const name = this.names.get(schema);
    if (!name) return plain(schema);
    this.schemas[name] ??= plain(schema);
    return { $ref: `#/components/schemas/${name}` };
  }
}

/**
 * A TypeBox schema as plain JSON Schema: TypeBox's symbol keys dropped, and
 * the limits checked in code (CHECKED_IN_CODE) stated as ordinary keywords.
 */
export function plain(schema: unknown): Json {
  return JSON.parse(JSON.stringify(schema), (_key, value: unknown) => {
    if (typeof value !== 'object' || value === null || !(CHECKED_IN_CODE in value)) return value;
    const { [CHECKED_IN_CODE]: limits, ...rest } = value as Json;
    return { ...rest, ...(limits as Json) };
  }) as Json;
}

export function pascalCase(name: string): string {
  return name.replace(/(^|-)([a-z0-9])/g, (_, _dash: string, c: string) => c.toUpperCase());
}

export function camelCase(name: string): string {
  const pascal = pascalCase(name);
  return pascal.charAt(0).toLowerCase() + pascal.slice(1);
}
