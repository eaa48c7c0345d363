import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import { authenticate, type RouteAuth } from './middleware/authenticate.ts';
import { jsonBody, type BodyLimits } from './middleware/json-body.ts';
import type { AppContext, AppDeps, AppMiddleware, AppRouter } from './types.ts';

/**
 * One endpoint: its request concerns, its schemas and its handler, declared in
 * one place (api/routes/<group>/<name>.ts). `mountRoutes` turns the request
 * concerns into Koa middleware in front of the handler; the API reference is
 * generated from the same declarations and the core's schemas, so a field
 * added to a schema shows up in validation, types and docs at once.
 */
export interface RouteSpec {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** Koa path, `:name` for path parameters. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: 'email' | 'workflow' | 'keys' | 'health';
  /**
   * Who may call (api/middleware/authenticate.ts): sets `ctx.state.principal`.
   * Absent: a public route (tracking, the provider webhook, health, docs).
   */
  auth?: RouteAuth;
  /**
   * A JSON body of this shape, read up to `limit` bytes after decoding
   * (larger → 413; an unauthenticated caller's limit is smaller) with bounded
   * nesting and value count (api/middleware/json-body.ts).
   */
  body?: { schema: TSchema } & BodyLimits;
  query?: TObject;
  params?: TObject;
  /** Every answer the route gives, by HTTP status. */
  responses: Record<number, { description: string; schema?: TSchema; contentType?: string }>;
  handler(ctx: AppContext, deps: AppDeps): Promise<void> | void;
}

export const defineRoute = (spec: RouteSpec): RouteSpec => spec;

/** Every failure of both interfaces: `{ success: false, error }` (api/middleware/error-handler.ts). */
export const ErrorResponseSchema = Type.Object({ success: Type.Literal(false), error: Type.String() });

/** A failure answer of a route, for its `responses`. */
export const failure = (description: string) => ({ description, schema: ErrorResponseSchema });

/**
 * The middleware a route's declaration asks for, in order: authentication
 * first (nobody unproven gets a body parsed or learns about its payload),
 * then the body (415/413/400).
 */
function middlewareOf(spec: RouteSpec, deps: AppDeps): AppMiddleware[] {
  const chain: AppMiddleware[] = [];
  if (spec.auth) chain.push(authenticate(spec.auth, deps) as AppMiddleware);
  if (spec.body) chain.push(...(jsonBody(spec.body) as AppMiddleware[]));
  return chain;
}

export function mountRoutes(router: AppRouter, routes: readonly RouteSpec[], deps: AppDeps): void {
  for (const spec of routes) {
    router[spec.method](spec.path, ...middlewareOf(spec, deps), (ctx: AppContext) => spec.handler(ctx, deps));
  }
}
