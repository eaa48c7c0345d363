import type { TSchema } from '@sinclair/typebox';
import type { WorkflowDefinition } from './definition.ts';

/**
 * The body a trigger accepts, as the API reference publishes it: the
 * workflow's input schema (what is validated once the body is normalised),
 * with each aliased key also in its other spelling (`user_id` beside
 * `userId`), one of the two required where the key is. So a body the gateway
 * takes also passes the published schema. (Both spellings with different
 * values is refused, 400: a rule the schema does not state.)
 */
export function acceptedInput(def: WorkflowDefinition): TSchema {
  const { input } = def;
  if (!def.aliases?.length) return input;
  const aliasOf = new Map(def.aliases);
  const requiredKeys = new Set(input.required ?? []);
  const properties: Record<string, TSchema> = {};
  const required: string[] = [];
  const eitherSpelling: Array<{ anyOf: Array<{ required: string[] }> }> = [];
  for (const [key, schema] of Object.entries(input.properties)) {
    properties[key] = schema;
    const alias = aliasOf.get(key);
    if (alias !== undefined)
      properties[alias] = { ...schema, description: `\`${key}\`, spelled in snake_case (either, not both).` };
    if (!requiredKeys.has(key)) continue;
    if (alias === undefined) required.push(key);
    else eitherSpelling.push({ anyOf: [{ required: [key] }, { required: [alias] }] });
  }
  const { properties: _, required: __, ...rest } = input;
  return {
    ...rest,
    properties,
    ...(required.length > 0 ? { required } : {}),
    ...(eitherSpelling.length > 0 ? { allOf: eitherSpelling } : {}),
  } as unknown as TSchema;
}
