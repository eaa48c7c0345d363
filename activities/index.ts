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
  const email = createEmailActivities(deps);
  const heard = outcomeHeardBy(deps.webhooks);
  return {
    ...users,
    ...email,
    // A run's last step also says whether its completion is heard (outcome-hint.ts):
    // the welcome run's flag, the EIN run's send.
    markWelcomeEmailSent: hintsOutcome(users.markWelcomeEmailSent, heard),
    deliverEinEmail: hintsOutcome(email.deliverEinEmail, heard),
    ...createWebhookActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
