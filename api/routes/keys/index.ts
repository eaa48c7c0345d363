import { Type } from '@sinclair/typebox';
import {
  apiKeyView,
  CreatedKeyResponseSchema,
  CreateKeyBodySchema,
  type CreateKeyBody,
  KeyListResponseSchema,
} from '../../../core/api-keys/key-schema.ts';
import { MailroomError } from '../../../core/errors.ts';
import type { RouteAuth } from '../../middleware/authenticate.ts';
import { defineRoute, failure, OkResponseSchema, type RouteSpec } from '../../route.ts';

/**
 * API keys over HTTP, for a company's own automation: a key with
 * `keys:manage` lists, creates and revokes its company's keys. A new key
 * never gets a scope the creating key lacks (no escalation). A key bound to
 * an organization manages that organization's keys only, and every key it
 * creates is bound to that organization too (never company-wide). Operators
 * use `npm run keys` for the first key of a company.
 */
/**
 * Live keys a company may hold through the API (a caller with keys:manage
 * could otherwise mint them without end); revoked ones do not count. The
 * operator's `npm run keys` is not limited.
 */
export const MAX_LIVE_KEYS_PER_COMPANY = 100;

const MANAGE: RouteAuth = { scope: 'keys:manage', identityFromKey: true, company: true };
const AUTH_FAILURES = {
  401: failure('No valid API key.'),
  403: failure('The API key lacks the keys:manage scope, or a scope it would grant.'),
};
export const KEY_NOT_FOUND = 'api key not found';
export const TEST_KEY_MAKES_TEST_KEYS = 'a test-mode key creates test-mode keys only';

/**
 * Which keys a caller manages: a test-mode key, its company's test keys only
 * (test and live are apart: it never lists or revokes a live key); a live key,
 * all of them (it may make test keys too).
 */
const sees = (principal: { test?: boolean | undefined }, key: { test: boolean }) =>
  principal.test !== true || key.test;

export const listKeysRoute = defineRoute({
  method: 'get',
  path: '/api/keys',
  operationId: 'listApiKeys',
  summary: "The company's API keys, or the organization's for a key bound to one (never their secrets)",
  tag: 'keys',
  auth: MANAGE,
  responses: { 200: { description: 'Newest first.', schema: KeyListResponseSchema }, ...AUTH_FAILURES },
  async handler(ctx, { keys }) {
    const listed = await keys.list(ctx.state.company.companyId, ctx.state.principal.boundOrganizationId);
    ctx.body = { success: true, data: listed.filter((k) => sees(ctx.state.principal, k)).map(apiKeyView) };
  },
});

export const createKeyRoute = defineRoute({
  method: 'post',
  path: '/api/keys',
  operationId: 'createApiKey',
  summary: 'Create an API key for the company; the secret is in this answer only',
  tag: 'keys',
  auth: MANAGE,
  body: { schema: CreateKeyBodySchema, limit: '16kb', validate: true },
  responses: {
    201: { description: 'Created.', schema: CreatedKeyResponseSchema },
    400: failure('Invalid body.'),
    409: failure(
      `The company holds ${MAX_LIVE_KEYS_PER_COMPANY} keys of this mode (live or test) already; revoke one first.`,
    ),
    ...AUTH_FAILURES,
  },
  async handler(ctx, { keys }) {
    const owner = ctx.state.company;
    const body = ctx.request.body as CreateKeyBody;
    const granted = ctx.state.principal.scopes;
    const beyond = body.scopes.filter((scope) => granted && !granted.includes(scope));
    if (beyond.length)
      throw new MailroomError('forbidden', `this API key cannot grant the ${beyond.join(', ')} scope`);
    // Asking a test key for a live one is refused, not quietly answered with a test key.
    if (ctx.state.principal.test === true && body.test === false)
      throw new MailroomError('forbidden', TEST_KEY_MAKES_TEST_KEYS);
    // A test key makes test keys only: it cannot mint a live one.
    const test = body.test === true || ctx.state.principal.test === true;
    // Each mode has its own cap: test keys never use up the live ones'.
    const created = await keys.createCapped(
      {
        companyId: owner.companyId,
        // A bound key's keys are bound to its organization (X-Organization-Id, if
        // sent, had to name it); a company-wide key binds the new one to the
        // organization it names, if any.
        organizationId: ctx.state.principal.boundOrganizationId ?? owner.organizationId ?? null,
        name: body.name,
        scopes: body.scopes,
        test,
      },
      MAX_LIVE_KEYS_PER_COMPANY,
    );
    if (created === 'too-many')
      throw new MailroomError(
        'conflict',
        `a company may hold at most ${MAX_LIVE_KEYS_PER_COMPANY} ${test ? 'test' : 'live'} API keys; revoke one first`,
      );
    const { key, plaintext } = created;
    ctx.status = 201;
    ctx.body = { success: true, key: apiKeyView(key), secret: plaintext };
  },
});

export const revokeKeyRoute = defineRoute({
  method: 'delete',
  path: '/api/keys/:id',
  operationId: 'revokeApiKey',
  summary: 'Revoke one of the company’s API keys (takes effect within seconds)',
  tag: 'keys',
  auth: MANAGE,
  params: Type.Object({ id: Type.String() }),
  responses: {
    200: { description: 'Revoked.', schema: OkResponseSchema },
    ...AUTH_FAILURES,
    403: failure('The key to revoke holds a scope this API key lacks (or this key lacks keys:manage).'),
    404: failure(
      'No live key with this id in the company (or, for a key bound to an organization, in its organization).',
    ),
  },
  async handler(ctx, { keys }) {
    const revoked = await keys.revoke(
      ctx.valid.params.id,
      ctx.state.company.companyId,
      ctx.state.principal.boundOrganizationId,
      // A test key never reaches a live one: answered as if it did not exist.
      ctx.state.principal.test === true,
      // Nor a key one with a scope it lacks: it could not have made it either.
      ctx.state.principal.scopes,
    );
    if (!revoked) throw new MailroomError('not_found', KEY_NOT_FOUND);
    ctx.body = { success: true };
  },
});

export const keyRoutes: readonly RouteSpec[] = [listKeysRoute, createKeyRoute, revokeKeyRoute];
