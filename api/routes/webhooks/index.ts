import type { RouteSpec } from '../../route.ts';
import { listDeliveriesRoute, retryDeliveryRoute } from './deliveries.ts';
import {
  createEndpointRoute,
  deleteEndpointRoute,
  listEndpointsRoute,
  readEndpointRoute,
  updateEndpointRoute,
} from './endpoints.ts';
import { rotateSecretRoute } from './secret.ts';

/** /api/webhooks…: a company's outbound webhook endpoints and their deliveries (docs/webhooks.md). */
export const webhookRoutes: readonly RouteSpec[] = [
  createEndpointRoute,
  listEndpointsRoute,
  readEndpointRoute,
  updateEndpointRoute,
  deleteEndpointRoute,
  rotateSecretRoute,
  listDeliveriesRoute,
  retryDeliveryRoute,
];
