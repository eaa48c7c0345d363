import { MailroomError } from '../../../core/errors.ts';
import { EndpointIdParams } from '../../../core/webhooks/endpoint-schema.ts';
import { deliveryKeyOf } from '../../../core/webhooks/delivery-store.ts';
import { HttpError } from '../../http-error.ts';
import { defineRoute, failure } from '../../route.ts';
import { decodeCursor, encodeCursor } from '../workflow/runs-cursor.ts';
import {
  DeliveryListQuery,
  DeliveryListResponse,
  DeliveryParams,
  DeliveryResponse,
  deliveryView,
} from './delivery-schema.ts';
import {
  DELIVERY_NOT_FOUND,
  ENDPOINT_NOT_FOUND,
  MANAGE_WEBHOOKS,
  ownerOf,
  WEBHOOK_AUTH_FAILURES,
} from './webhook-auth.ts';

export const listDeliveriesRoute = defineRoute({
  method: 'get',
  path: '/api/webhooks/:id/deliveries',
  operationId: 'listWebhookDeliveries',
  summary: "An endpoint's deliveries, newest first, with their attempts and what comes next",
  tag: 'webhooks',
  auth: MANAGE_WEBHOOKS,
  params: EndpointIdParams,
  query: DeliveryListQuery,
  responses: {
    200: { description: 'Newest first.', schema: DeliveryListResponse },
    400: failure('Invalid id, limit or cursor.'),
    ...WEBHOOK_AUTH_FAILURES,
    404: failure('No such endpoint of this company.'),
  },
  async handler(ctx, { webhooks, config }) {
    const endpoint = await webhooks.endpoints.get(ownerOf(ctx), ctx.valid.params.id);
    if (!endpoint) throw new MailroomError('not_found', ENDPOINT_NOT_FOUND);
    const limit = ctx.valid.query.limit ?? 50;
    const { cursor } = ctx.valid.query;
    const before =
      cursor === undefined ? undefined : parseCursor(decodeCursor(config.secret, endpoint._id, cursor));
    const docs = await webhooks.deliveries.list(endpoint._id, limit, before);
    const last = docs.length === limit ? docs[docs.length - 1] : undefined;
    ctx.body = {
      success: true,
      data: docs.map(deliveryView),
      nextCursor: last
        ? encodeCursor(
            config.secret,
            endpoint._id,
            Buffer.from(`${last.created_at.getTime()}:${last.event_id}`),
          )
        : null,
    };
  },
});

function parseCursor(bytes: Buffer): { at: Date; id: string } {
  const [at, id] = bytes.toString('utf8').split(':');
  if (!at || !id || !/^\d+$/.test(at)) throw new HttpError(400, 'cursor is invalid');
  return { at: new Date(Number(at)), id };
}

export const retryDeliveryRoute = defineRoute({
  method: 'post',
  path: '/api/webhooks/:id/deliveries/:delivery_id/retry',
  operationId: 'retryWebhookDelivery',
  summary: 'Deliver an event to the endpoint again (same `webhook-id`, same body)',
  description:
    'For a delivery that ended (delivered or failed): a new run with the same retry schedule. ' +
    'A delivery still being attempted, or an endpoint that is disabled, answers 409.',
  tag: 'webhooks',
  auth: MANAGE_WEBHOOKS,
  params: DeliveryParams,
  responses: {
    202: { description: 'Replaying.', schema: DeliveryResponse },
    400: failure('Invalid ids.'),
    ...WEBHOOK_AUTH_FAILURES,
    404: failure('No such endpoint or delivery of this company.'),
    409: failure('The delivery is still being attempted, or the endpoint is disabled.'),
    500: failure('Temporal could not start the delivery.'),
  },
  async handler(ctx, { webhooks }) {
    const { id, delivery_id: eventId } = ctx.valid.params;
    const endpoint = await webhooks.endpoints.get(ownerOf(ctx), id);
    if (!endpoint) throw new MailroomError('not_found', ENDPOINT_NOT_FOUND);
    const key = deliveryKeyOf(endpoint._id, eventId);
    const delivery = await webhooks.deliveries.get(key);
    if (!delivery) throw new MailroomError('not_found', DELIVERY_NOT_FOUND);
    if (!endpoint.enabled) throw new MailroomError('conflict', 'webhook endpoint is disabled');
    if (delivery.status === 'pending' || !(await webhooks.deliveries.reopen(key)))
      throw new MailroomError('conflict', 'webhook delivery is still being attempted');
    const started = await webhooks.startDelivery(
      { deliveryKey: key, endpointId: endpoint.id, eventId, companyId: endpoint.company_id },
      { replay: true },
    );
    if (started === 'running')
      throw new MailroomError('conflict', 'webhook delivery is still being attempted');
    ctx.status = 202;
    ctx.body = { success: true, delivery: deliveryView((await webhooks.deliveries.get(key)) ?? delivery) };
  },
});
