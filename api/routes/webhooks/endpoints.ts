import { MailroomError } from '../../../core/errors.ts';
import {
  CreatedEndpointResponse,
  CreateEndpointBody,
  EndpointIdParams,
  EndpointListResponse,
  EndpointResponse,
  UpdateEndpointBody,
  describeEndpointProblem,
} from '../../../core/webhooks/endpoint-schema.ts';
import { endpointUrlProblem, endpointView } from '../../../core/webhooks/index.ts';
import { MAX_ENDPOINTS_PER_COMPANY } from '../../../core/webhooks/endpoint-store.ts';
import { defineRoute, failure, OkResponseSchema } from '../../route.ts';
import type { AppDeps } from '../../types.ts';
import { ENDPOINT_NOT_FOUND, MANAGE_WEBHOOKS, ownerOf, WEBHOOK_AUTH_FAILURES } from './webhook-auth.ts';

/** 400 unless the URL may be called (http(s), public address: endpoint-url.ts). */
async function checkUrl(url: string, { config }: AppDeps): Promise<void> {
  const problem = await endpointUrlProblem(url, config.webhooks.allowedAddresses);
  if (problem) throw new MailroomError('validation', problem);
}

export const createEndpointRoute = defineRoute({
  method: 'post',
  path: '/api/webhooks',
  operationId: 'createWebhookEndpoint',
  summary: 'Register an endpoint for outbound webhook events; its signing secret is in this answer only',
  description:
    'Events are POSTed as JSON signed per the Standard Webhooks specification (`webhook-id`, ' +
    '`webhook-timestamp`, `webhook-signature`). The URL must be http(s) and resolve to a public address.',
  tag: 'webhooks',
  auth: MANAGE_WEBHOOKS,
  body: { schema: CreateEndpointBody, limit: '16kb', validate: true },
  responses: {
    201: { description: 'Created.', schema: CreatedEndpointResponse },
    400: failure('Invalid body, a URL that is not http(s) or points to a private address.'),
    ...WEBHOOK_AUTH_FAILURES,
    409: failure(`The company has ${MAX_ENDPOINTS_PER_COMPANY} endpoints already.`),
  },
  async handler(ctx, deps) {
    const body = ctx.request.body as CreateEndpointBody;
    await checkUrl(body.url, deps);
    const created = await deps.webhooks.endpoints.create(ownerOf(ctx), body);
    if (created === 'too-many')
      throw new MailroomError(
        'conflict',
        `a company may register at most ${MAX_ENDPOINTS_PER_COMPANY} webhook endpoints`,
      );
    deps.webhooks.subscriptions.invalidate();
    ctx.status = 201;
    ctx.body = { success: true, webhook: { ...endpointView(created.endpoint), secret: created.secret } };
  },
});

export const listEndpointsRoute = defineRoute({
  method: 'get',
  path: '/api/webhooks',
  operationId: 'listWebhookEndpoints',
  summary: "The company's webhook endpoints, newest first (never their secrets)",
  tag: 'webhooks',
  auth: MANAGE_WEBHOOKS,
  responses: {
    200: { description: 'Newest first.', schema: EndpointListResponse },
    ...WEBHOOK_AUTH_FAILURES,
  },
  async handler(ctx, { webhooks }) {
    ctx.body = { success: true, data: (await webhooks.endpoints.list(ownerOf(ctx))).map(endpointView) };
  },
});

export const readEndpointRoute = defineRoute({
  method: 'get',
  path: '/api/webhooks/:id',
  operationId: 'getWebhookEndpoint',
  summary: 'One webhook endpoint',
  tag: 'webhooks',
  auth: MANAGE_WEBHOOKS,
  params: EndpointIdParams,
  responses: {
    200: { description: 'The endpoint.', schema: EndpointResponse },
    400: failure('Invalid id.'),
    ...WEBHOOK_AUTH_FAILURES,
    404: failure('No such endpoint of this company.'),
  },
  async handler(ctx, { webhooks }) {
    const endpoint = await webhooks.endpoints.get(ownerOf(ctx), ctx.valid.params.id);
    if (!endpoint) throw new MailroomError('not_found', ENDPOINT_NOT_FOUND);
    ctx.body = { success: true, webhook: endpointView(endpoint) };
  },
});

export const updateEndpointRoute = defineRoute({
  method: 'patch',
  path: '/api/webhooks/:id',
  operationId: 'updateWebhookEndpoint',
  summary: 'Change an endpoint’s url, events, description, or enable it again',
  tag: 'webhooks',
  auth: MANAGE_WEBHOOKS,
  params: EndpointIdParams,
  body: {
    schema: UpdateEndpointBody,
    limit: '16kb',
    validate: true,
    describeProblem: describeEndpointProblem,
  },
  responses: {
    200: { description: 'The endpoint after the change.', schema: EndpointResponse },
    400: failure('Invalid id or body.'),
    ...WEBHOOK_AUTH_FAILURES,
    404: failure('No such endpoint of this company.'),
  },
  async handler(ctx, deps) {
    const body = ctx.request.body as UpdateEndpointBody;
    if (body.url !== undefined) await checkUrl(body.url, deps);
    const endpoint = await deps.webhooks.endpoints.update(ownerOf(ctx), ctx.valid.params.id, body);
    if (!endpoint) throw new MailroomError('not_found', ENDPOINT_NOT_FOUND);
    deps.webhooks.subscriptions.invalidate();
    ctx.body = { success: true, webhook: endpointView(endpoint) };
  },
});

export const deleteEndpointRoute = defineRoute({
  method: 'delete',
  path: '/api/webhooks/:id',
  operationId: 'deleteWebhookEndpoint',
  summary: 'Remove an endpoint; deliveries still retrying to it end failed',
  tag: 'webhooks',
  auth: MANAGE_WEBHOOKS,
  params: EndpointIdParams,
  responses: {
    200: { description: 'Removed.', schema: OkResponseSchema },
    400: failure('Invalid id.'),
    ...WEBHOOK_AUTH_FAILURES,
    404: failure('No such endpoint of this company.'),
  },
  async handler(ctx, { webhooks }) {
    if (!(await webhooks.endpoints.remove(ownerOf(ctx), ctx.valid.params.id)))
      throw new MailroomError('not_found', ENDPOINT_NOT_FOUND);
    webhooks.subscriptions.invalidate();
    ctx.body = { success: true };
  },
});
