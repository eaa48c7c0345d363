import { Type } from '@sinclair/typebox';
import {
  AddSuppressionBodySchema,
  SuppressionListQuerySchema,
  SuppressionListResponseSchema,
  SuppressionResponseSchema,
} from '../../../core/email/email-schema.ts';
import { INVALID_EMAIL_ADDRESS } from '../../../core/email/email-messages.ts';
import type { RouteAuth } from '../../middleware/authenticate.ts';
import { defineRoute, failure, OkResponseSchema, type RouteSpec } from '../../route.ts';
import { listOwner } from '../../../core/email/suppressions/index.ts';

/**
 * The company's suppression list: addresses its sends leave out. Reading
 * needs `email:read`; adding and removing need `email:send` (whoever may send
 * for the company decides whom it must not send to). The company is always
 * the caller's own.
 *
 * The list is the company's, not an organization's: a bounce or a spam
 * report is about the address, so every organization's sends honour it. Its
 * entries name other organizations' recipients and emails, and a change
 * applies to every organization, so a key bound to one organization gets
 * 403 here (its sends still skip suppressed recipients and say so).
 */
/** A test-mode key reads and writes its company's test list (docs/test-mode.md). */
const ownerOf = (company: { companyId: string; test?: boolean | undefined }) =>
  listOwner(company.companyId, company.test);

const READ: RouteAuth = { scope: 'email:read', identityFromKey: true, companyWide: true, company: true };
const WRITE: RouteAuth = { scope: 'email:send', identityFromKey: true, companyWide: true, company: true };
const AUTH_FAILURES = {
  401: failure('No valid API key or identity headers.'),
  403: failure('The API key lacks the scope, or is bound to an organization (the list is company-wide).'),
};
/** The address in the path, URL-encoded (`jane%40example.com`); too long is `invalid email address provided.` */
const AddressParams = Type.Object({ email: Type.String({ minLength: 1, maxLength: 320 }) });
const ADDRESS_ROUTE = {
  tag: 'email',
  params: AddressParams,
  describeProblem: () => INVALID_EMAIL_ADDRESS,
} as const;
/** What the routes naming one address answer besides success. */
const ADDRESS_FAILURES = {
  400: failure('Not a valid email address.'),
  ...AUTH_FAILURES,
  404: failure('The address is not on the company’s suppression list.'),
};

export const listSuppressionsRoute = defineRoute({
  method: 'get',
  path: '/api/email/suppressions',
  operationId: 'listSuppressions',
  summary: "The company's suppressed addresses, in address order, a page at a time",
  tag: 'email',
  auth: READ,
  query: SuppressionListQuerySchema,
  responses: {
    200: {
      description:
        'One page; `next` is the `after` of the next page, and `nextCursor` the same value as the ' +
        "other lists' `cursor` (this list takes either name).",
      schema: SuppressionListResponseSchema,
    },
    400: failure('Invalid query.'),
    ...AUTH_FAILURES,
  },
  async handler(ctx, { email }) {
    ctx.body = {
      success: true,
      ...(await email.suppressions.list(ownerOf(ctx.state.company), ctx.valid.query)),
    };
  },
});

export const getSuppressionRoute = defineRoute({
  method: 'get',
  path: '/api/email/suppressions/:email',
  operationId: 'getSuppression',
  summary: 'Whether an address is suppressed, and why',
  ...ADDRESS_ROUTE,
  auth: READ,
  responses: {
    200: { description: 'Suppressed.', schema: SuppressionResponseSchema },
    ...ADDRESS_FAILURES,
  },
  async handler(ctx, { email }) {
    const owner = ownerOf(ctx.state.company);
    ctx.body = { success: true, data: await email.suppressions.get(owner, ctx.valid.params.email) };
  },
});

export const addSuppressionRoute = defineRoute({
  method: 'post',
  path: '/api/email/suppressions',
  operationId: 'addSuppression',
  summary: 'Suppress an address for the company (reason `manual` unless given)',
  tag: 'email',
  auth: WRITE,
  body: { schema: AddSuppressionBodySchema, limit: '16kb' },
  responses: {
    201: { description: 'Added.', schema: SuppressionResponseSchema },
    200: { description: 'Already suppressed: the entry, updated.', schema: SuppressionResponseSchema },
    400: failure('Invalid body or address.'),
    ...AUTH_FAILURES,
  },
  async handler(ctx, { email }) {
    const { suppression, created } = await email.suppressions.add(
      ownerOf(ctx.state.company),
      ctx.request.body,
    );
    ctx.status = created ? 201 : 200;
    ctx.body = { success: true, data: suppression };
  },
});

export const removeSuppressionRoute = defineRoute({
  method: 'delete',
  path: '/api/email/suppressions/:email',
  operationId: 'removeSuppression',
  summary: 'Remove an address from the company’s suppression list (sends reach it again)',
  ...ADDRESS_ROUTE,
  auth: WRITE,
  responses: {
    200: { description: 'Removed.', schema: OkResponseSchema },
    ...ADDRESS_FAILURES,
  },
  async handler(ctx, { email }) {
    await email.suppressions.remove(ownerOf(ctx.state.company), ctx.valid.params.email);
    ctx.body = { success: true };
  },
});

export const suppressionRoutes: readonly RouteSpec[] = [
  listSuppressionsRoute,
  getSuppressionRoute,
  addSuppressionRoute,
  removeSuppressionRoute,
];
