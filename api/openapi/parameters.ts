import type { TObject } from '@sinclair/typebox';
import { IDENTITY_HEADERS } from '../middleware/authenticate.ts';
import type { RouteSpec } from '../route.ts';
import { plain, type Json } from './components.ts';

/** An operation's parameters: path, query and headers as its route declares them, and the identity headers. */

/**
 * One parameter per property of a route's params, query or headers (path
 * parameters are always required; headers are declared lower-case, and
 * documented as `Idempotency-Key`).
 */
export function objectParameters(
  schema: TObject | undefined,
  where: 'path' | 'query' | 'header',
  skip: string[] = [],
): Json[] {
  if (!schema) return [];
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties)
    .filter(([name]) => !skip.includes(name))
    .map(([name, property]) => {
      const { description, ...rest } = plain(property);
      return {
        name: where === 'header' ? headerName(name) : name,
        in: where,
        required: where === 'path' || required.has(name),
        ...(description === undefined ? {} : { description }),
        schema: rest,
      };
    });
}

/** The identity headers of an authenticated route (api/middleware/authenticate.ts). */
export function identityParameters(spec: RouteSpec): Json[] {
  if (!spec.auth) return [];
  const WHAT = { companyId: 'company', organizationId: 'organization', userId: 'user' } as const;
  return (Object.entries(IDENTITY_HEADERS) as Array<[keyof typeof WHAT, string]>).map(([field, header]) => ({
    name: headerName(header),
    in: 'header',
    required: false,
    description: spec.auth?.identityFromKey
      ? `The calling ${WHAT[field]}'s id (a UUID). Optional: the API key names the company (and ` +
        'organization); a header that is sent must match the key.'
      : `The calling ${WHAT[field]}'s id (a UUID), matching the API key. Sending with a template that ` +
        'requires authentication needs all three identity headers.',
    schema: { type: 'string', format: 'uuid' },
  }));
}

/** `x-company-id` → `X-Company-Id`. */
function headerName(lowerCase: string): string {
  return lowerCase.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());
}
