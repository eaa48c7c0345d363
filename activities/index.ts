import type { Db } from 'mongodb';
import type { Config } from '../core/config.ts';
import type { EmailService } from '../core/email/contract.ts';
import { createEmailActivities } from './email.ts';
import { hintsOutcome, outcomeHeardBy } from './outcome-hint.ts';
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
  const users = createUserActivities(deps);
  return {
    ...users,
    // A welcome run's last step also says whether its completion is heard (outcome-hint.ts).
    markWelcomeEmailSent: hintsOutcome(users.markWelcomeEmailSent, outcomeHeardBy(deps.webhooks)),
    ...createEmailActivities(deps),
    ...createWebhookActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
