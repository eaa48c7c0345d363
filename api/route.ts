import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import { describeBodyProblem } from '../core/email/email-messages.ts';
import type { DescribeProblem } from '../core/validation.ts';
import { authenticate, clientIpReader, requireCompany, type RouteAuth } from './middleware/authenticate.ts';
import { jsonBody, type BodyLimits, type BodyReading } from './middleware/json-body.ts';
import { BodyBudget } from './middleware/body-budget.ts';
import { validateRequest } from './middleware/request-validation.ts';
import type { AppContext, AppDeps, AppMiddleware, AppRouter } from './types.ts';

/** What `mountRoutes` validated of a request's strings, typed by the route's schemas. */
export interface ValidRequest<P extends TObject, Q extends TObject, H extends TObject> {
  params: Static<P>;
  query: Static<Q>;
  headers: Static<H>;
}

/** A handler's context: the app's, plus `ctx.valid` (the route's params, query and headers). */
export type RouteContext<P extends TObject, Q extends TObject, H extends TObject> = AppContext & {
  valid: ValidRequest<P, Q, H>;
};

/**
 * One endpoint: its request concerns, its schemas and its handler, declared in
 * one place (api/routes/<group>/<name>.ts). `mountRoutes` turns the request
 * concerns into Koa middleware in front of the handler; the API reference is
 * generated from the same declarations and the core's schemas, so a field
 * added to a schema shows up in validation, types and docs at once.
 */
export interface RouteSpec<
  P extends TObject = TObject,
  Q extends TObject = TObject,
  H extends TObject = TObject,
> {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** Koa path, `:name` for path parameters. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: 'email' | 'workflow' | 'webhooks' | 'keys' | 'health';
  /**
   * Who may call (api/middleware/authenticate.ts): sets `ctx.state.principal`,
   * and `ctx.state.company` when it asks for a company.
   * Absent: a public route (tracking, the provider webhook, health, docs).
   */
  auth?: RouteAuth;
  /**
   * A JSON body of this shape, read up to `limit` bytes after decoding
   * (larger → 413; an unauthenticated caller's limit is smaller) with bounded
   * nesting and value count (api/middleware/json-body.ts). With `validate`,
   * it is checked against `schema` before the handler (400), a problem worded
   * by `describeProblem` (the email interface's words by default); otherwise
   * the core checks it (after authorising the caller, as send does).
   */
  body?: { schema: TSchema; validate?: boolean; describeProblem?: DescribeProblem } & BodyLimits;
  /**
   * Path parameters, query and headers (lower-case names), validated and
   * coerced from their strings before the handler runs, which gets them as
   * `ctx.valid` (api/middleware/request-strings.ts). A failure is 400.
   */
  params?: P;
  query?: Q;
  headers?: H;
  /** How a problem with `params`, `query` or `headers` is worded; the email interface's words by default. */
  describeProblem?: DescribeProblem;
  /**
   * Runs around the route's whole chain, authentication included: a concern
   * of this route's own that must see every outcome (the trigger's metrics).
   */
  around?: AppMiddleware;
  /**
   * What the route acts on, found once the caller is proven (the workflow
   * named in the path: unknown → 404), so an unproven caller learns nothing
   * of it (401 first).
   */
  resolve?: AppMiddleware;
  /** Every answer the route gives, by HTTP status (`headers`: the answer's own headers, name → meaning). */
  responses: Record<number, RouteResponse>;
  handler(ctx: RouteContext<P, Q, H>, deps: AppDeps): Promise<void> | void;
}

/** One answer of a route as the API reference states it. */
export interface RouteResponse {
  description: string;
  schema?: TSchema;
  contentType?: string;
  headers?: Record<string, string>;
  /**
   * A failure's `error` messages, as sent: the OpenAPI document lists them
   * in the answer's description and as its examples, so a client finds each
   * message it may match on (a message ending in `…` has a variable rest).
   */
  messages?: readonly string[];
}

/** Declares a route; its handler's `ctx.valid` is typed by its params, query and headers schemas. */
export const defineRoute = <
  P extends TObject = TObject,
  Q extends TObject = TObject,
  H extends TObject = TObject,
>(
  spec: RouteSpec<P, Q, H>,
): RouteSpec<P, Q, H> => spec;

/** Every failure of both interfaces: `{ success: false, error }` (api/middleware/error-handler.ts). */
export const ErrorResponseSchema = Type.Object({ success: Type.Literal(false), error: Type.String() });

/** A success with nothing more to say: `{ success: true }` (track, webhook, removals, revocations). */
export const OkResponseSchema = Type.Object({ success: Type.Literal(true) });

/** A failure answer of a route, for its `responses`, with the messages it carries. */
export const failure = (description: string, messages: readonly string[] = []): RouteResponse => ({
  description,
  schema: ErrorResponseSchema,
  ...(messages.length > 0 ? { messages } : {}),
});

/**
 * The middleware a route's declaration asks for, in order: authentication
 * first (nobody unproven gets a body parsed or learns about its payload),
 * then the company it acts for (401 without one), then what it acts on
 * (404), then the body (415/413/400), then its params, query and headers (400).
 */
function middlewareOf(spec: RouteSpec, deps: AppDeps, bodies: BodyReading): AppMiddleware[] {
  const chain: AppMiddleware[] = spec.around ? [spec.around] : [];
  if (spec.auth) chain.push(authenticate(spec.auth, deps) as AppMiddleware);
  if (spec.auth?.company) chain.push(requireCompany as AppMiddleware);
  if (spec.resolve) chain.push(spec.resolve);
  if (spec.body) chain.push(...(jsonBody(spec.body, bodies) as AppMiddleware[]));
  chain.push(validateRequest(spec, spec.describeProblem ?? describeBodyProblem) as AppMiddleware);
  return chain;
}

export function mountRoutes(router: AppRouter, routes: readonly RouteSpec[], deps: AppDeps): void {
  // One room for the bodies of every route of this gateway.
  const bodies: BodyReading = {
    receiveMs: deps.config.bodyReceiveMs,
    budget: new BodyBudget(deps.config.bodyBytesInFlight),
    clientIp: clientIpReader(deps.config.trustedProxies),
  };
  for (const spec of routes) {
    router[spec.method](spec.path, ...middlewareOf(spec, deps, bodies), (ctx: AppContext) =>
      spec.handler(ctx as RouteContext<TObject, TObject, TObject>, deps),
    );
  }
}
