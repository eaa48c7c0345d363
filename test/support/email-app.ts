import { randomUUID } from 'node:crypto';
import { after, before, beforeEach } from 'node:test';
import { Client } from '@temporalio/client';
import { createApp } from '../../api/app.ts';
import { gatewayTemporalConnection } from '../../api/temporal-deadlines.ts';
import { startEmailCore, type EmailCore, type EmailCoreOptions } from './email-core.ts';
import { httpClient, type HttpClient } from './http.ts';
import { serve } from './serve.ts';

/**
 * A real gateway for the email route tests: createApp on an ephemeral port in
 * front of the real email core (test/support/email-core.ts). Temporal is never
 * called by these routes, so its client is a lazy connection to nowhere.
 * Requests carry AUTH unless a test passes its own headers.
 */

export const COMPANY = randomUUID();
export const ORGANIZATION = randomUUID();
export const USER = randomUUID();
export const AUTH = { 'x-company-id': COMPANY, 'x-organization-id': ORGANIZATION, 'x-user-id': USER };

export type EmailTestApp = EmailCore & HttpClient & { url: string };

export async function startEmailApp(options: EmailCoreOptions = {}): Promise<EmailTestApp> {
  const core = await startEmailCore(options);
  const temporal = new Client({ connection: gatewayTemporalConnection('127.0.0.1:1') });
  core.useTemporal(temporal);
  const server = await serve(createApp({ ...core, db: core.database.db, temporal }));
  return {
    ...core,
    ...httpClient(server.url, AUTH),
    url: server.url,
    async close() {
      await server.close();
      await core.close();
    },
  };
}

/**
 * The gateway for one `describe` block: started before its tests, closed
 * after them, the fake provider reset before each test. Use it like the app
 * itself inside tests (it forwards to the started one).
 */
export function useEmailApp(options: EmailCoreOptions = {}): EmailTestApp {
  let app: EmailTestApp | undefined;
  before(async () => {
    app = await startEmailApp(options);
  });
  after(() => app?.close());
  beforeEach(() => app?.fake.reset());
  return new Proxy({} as EmailTestApp, {
    get(_, property) {
      if (!app) throw new Error('useEmailApp: the app is used outside of a test');
      return Reflect.get(app, property);
    },
  });
}

export { invoiceBody, welcomeBody } from './sample-emails.ts';
