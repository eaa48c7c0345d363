import type { Router, RouterContext, RouterMiddleware } from '@koa/router';
import type { Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import type { Config } from '../core/config.ts';
import type { EmailService } from '../core/email/contract.ts';
import type { KeyStore } from '../core/api-keys/key-store.ts';
import type { Caller, Principal } from '../core/identity.ts';
import type { Logger } from '../core/logger.ts';
import type { WorkflowDefinition } from '../core/workflows/definition.ts';
import type { Webhooks } from '../core/webhooks/index.ts';

/** Everything a route may use. Built once by api/server.ts; tests build their own. */
export interface AppDeps {
  config: Config;
  logger: Logger;
  db: Db;
  temporal: Client;
  email: EmailService;
  /** API keys (AUTH_MODE=api-key). */
  keys: KeyStore;
  /** Outbound webhook endpoints and deliveries. */
  webhooks: Webhooks;
  /** Set while the gateway shuts down (api/graceful-drain.ts): `/ready` answers 503. */
  lifecycle?: { readonly draining: boolean };
}

/**
 * What middleware leaves on `ctx.state` for the handlers after it. Each field
 * is set by exactly one middleware: `principal` by authenticate(), `company` by
 * requireCompany() (routes whose `auth` asks for a company), `workflow` by the
 * workflow router's `workflowName` param.
 */
export interface AppState {
  principal: Principal;
  /** The company the route acts for (RouteAuth `company`), ids lower-cased. */
  company: Caller & { companyId: string };
  workflow: WorkflowDefinition;
}

export type AppContext = RouterContext<AppState>;
export type AppMiddleware = RouterMiddleware<AppState>;
export type AppRouter = Router<AppState>;
