import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import { identity, memoSafeIdentity } from './middleware/identity.ts';
import { jsonBody } from './middleware/json-body.ts';
import type { AppContext, AppDeps, AppMiddleware, AppRouter } from './types.ts';

/**
 * One endpoint: its request concerns, its schemas and its handler, declared in
 * one place (api/routes/<group>/<name>.ts). `mountRoutes` turns the request
 * concerns into Koa middleware in front of the handler; the API reference is
 * generated from the same declarations and the core's schemas, so a field
 * added to a schema shows up in validation, types and docs at once.
 */
export interface RouteSpec {
  method: 'get' | 'post' | 'delete';
  /** Koa path, `:name` for path parameters. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: 'email' | 'workflow' | 'health';
  /** Reads the identity headers into `ctx.state.caller`; `memo-safe` also bounds them (they go into a run's memo). */
  identity?: 'headers' | 'memo-safe';
  /** A JSON body of this shape, parsed up to `limit` bytes (larger → 413). */
  body?: { schema: TSchema; limit: string };
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

/** The middleware a route's declaration asks for, in order: body (415/413/400 first), then identity. */
function middlewareOf(spec: RouteSpec): AppMiddleware[] {
  const chain: AppMiddleware[] = [];
  if (spec.body) chain.push(...(jsonBody(spec.body.limit) as AppMiddleware[]));
  if (spec.identity) chain.push(identity() as AppMiddleware);
  if (spec.identity === 'memo-safe') chain.push(memoSafeIdentity() as AppMiddleware);
  return chain;
}

export function mountRoutes(router: AppRouter, routes: readonly RouteSpec[], deps: AppDeps): void {
  for (const spec of routes) {
    router[spec.method](spec.path, ...middlewareOf(spec), (ctx: AppContext) => spec.handler(ctx, deps));
  }
}
