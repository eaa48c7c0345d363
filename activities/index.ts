import type { Db } from 'mongodb';
import type { Config } from '../core/config.ts';
import type { EmailService } from '../core/email/contract.ts';
import { createEmailActivities } from './email.ts';
import { createUserActivities } from './users.ts';
import { createWebhookActivities } from './webhooks.ts';
import type { Webhooks } from '../core/webhooks/index.ts';

export interface ActivityDeps {
  db: Db;
  email: EmailService;
  config: Config;
  webhooks: Webhooks;
}

/**
 * Every activity the worker registers, built from its dependencies (Temporal
 * samples style). Workflows import only the *type* `Activities`.
 */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createUserActivities(deps),
    ...createEmailActivities(deps),
    ...createWebhookActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
