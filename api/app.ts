import Koa from 'koa';
import bodyParser from 'koa-bodyparser';
import type { Db } from 'mongodb';
import type { Client } from '@temporalio/client';
import type { Config } from '../core/config.ts';
import type { Logger } from '../core/logger.ts';
import type { EmailService } from '../core/email/contract.ts';
import { errorHandler } from './errors.ts';
import { requestLog } from './request-log.ts';
import { healthRoutes } from './routes/health/health.ts';
import { emailRoutes } from './routes/email/index.ts';
import { workflowRoutes } from './routes/workflow/index.ts';

/** Everything a route may use. Built once by api/server.ts; tests build their own. */
export interface AppDeps {
  config: Config;
  logger: Logger;
  db: Db;
  temporal: Client;
  email: EmailService;
}

/**
 * JSON bodies up to 45 MB: one message may carry 30 MB of attachments after
 * base64 decoding (DESIGN.md limits), which is 40 MB encoded. Larger → 413.
 */
export const JSON_BODY_LIMIT = '45mb';

export function createApp(deps: AppDeps): Koa {
  const app = new Koa();
  app.proxy = true;
  // Koa would print every error to stderr; errorHandler already logs what matters.
  app.silent = true;
  app.use(requestLog(deps.logger));
  app.use(errorHandler(deps.logger));
  app.use(
    bodyParser({
      enableTypes: ['json'],
      jsonLimit: JSON_BODY_LIMIT,
      strict: true,
      onerror: (err) => {
        throw err;
      },
    }),
  );
  for (const router of [healthRoutes(deps), emailRoutes(deps), workflowRoutes(deps)]) {
    app.use(router.routes());
    app.use(router.allowedMethods());
  }
  return app;
}
