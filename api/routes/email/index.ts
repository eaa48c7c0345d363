import type { RouteSpec } from '../../route.ts';
import { bulkRoute } from './bulk.ts';
import { clickRoute } from './click.ts';
import { scheduledRoutes } from './scheduled.ts';
import { quotaRoute } from './quota.ts';
import { sendRoute } from './send.ts';
import { statusRoute } from './status.ts';
import { suppressionRoutes } from './suppressions.ts';
import { pixelRoute, trackEventRoute } from './track.ts';
import { webhookRoute } from './webhook.ts';

/** The email endpoints: thin adapters from HTTP to the email core (core/email/service.ts). */
export const emailRoutes: readonly RouteSpec[] = [
  sendRoute,
  bulkRoute,
  statusRoute,
  quotaRoute,
  pixelRoute,
  trackEventRoute,
  clickRoute,
  webhookRoute,
  ...suppressionRoutes,
  ...scheduledRoutes,
];
