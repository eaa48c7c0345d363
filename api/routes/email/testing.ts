import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../../../core/config.ts';
import { connectDatabase, type Database } from '../../../core/db.ts';
import { createLogger } from '../../../core/logger.ts';
import type { EmailService } from '../../../core/email/contract.ts';
import { createEmailService, type EmailServiceDeps } from '../../../core/email/service.ts';
import { FakeSendGrid } from '../../../test/support/fake-sendgrid.ts';
import { mongoUri, uniqueName } from '../../../test/support/env.ts';
import { createApp } from '../../app.ts';

/**
 * A real gateway for the email route tests: createApp on an ephemeral port,
 * the real email core on its own FerretDB/MongoDB database, and the real
 * SendGrid client talking HTTP to FakeSendGrid. Temporal is never called by
 * these routes, so its client is a lazy connection to nowhere.
 */

export const COMPANY = randomUUID();
export const ORGANIZATION = randomUUID();
export const USER = randomUUID();
export const AUTH = { 'x-company-id': COMPANY, 'x-organization-id': ORGANIZATION, 'x-user-id': USER };

export interface HttpAnswer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

export interface EmailTestApp {
  url: string;
  fake: FakeSendGrid;
  database: Database;
  email: EmailService;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<HttpAnswer>;
  get(path: string, headers?: Record<string, string>): Promise<HttpAnswer>;
  close(): Promise<void>;
}

export interface StartOptions {
  /** Extra environment for loadConfig (e.g. SENDGRID_WEBHOOK_PUBLIC_KEY); `SENDGRID_API_KEY: ''` unsets the key. */
  env?: Record<string, string>;
  service?: Pick<EmailServiceDeps, 'fetchAttachment' | 'attachmentAllowedAddresses'>;
}

export async function startEmailApp(options: StartOptions = {}): Promise<EmailTestApp> {
  const fake = await new FakeSendGrid().start();
  const database = await connectDatabase(mongoUri(), uniqueName('email'));
  const config = loadConfig({
    SENDGRID_API_KEY: 'SG.test',
    SENDGRID_BASE_URL: fake.url,
    BLOCKED_EMAIL_DOMAINS: 'blocked.example',
    PUBLIC_BASE_URL: 'http://mailroom.test',
    EMAIL_FROM: 'Mailroom <no-reply@mailroom.test>',
    ...options.env,
  });
  const logger = createLogger('test', 'silent');
  const email = createEmailService({ db: database.db, config, logger, ...options.service });
  await email.ensureIndexes();
  const temporal = new Client({ connection: Connection.lazy({ address: '127.0.0.1:1' }) });
  const app = createApp({ config, logger, db: database.db, temporal, email });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  async function call(method: string, path: string, body: unknown, headers: Record<string, string>) {
    const init: RequestInit = { method, headers: { ...headers } };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
    }
    const res = await fetch(`${url}${path}`, init);
    const text = await res.text();
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(text) as Record<string, unknown>;
    } catch {
      parsed = { raw: text };
    }
    return { status: res.status, headers: res.headers, body: parsed };
  }

  return {
    url,
    fake,
    database,
    email,
    post: (path, body, headers = AUTH) => call('POST', path, body, headers),
    get: (path, headers = AUTH) => call('GET', path, undefined, headers),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await fake.stop();
      await database.db.dropDatabase();
      await database.close();
    },
  };
}

export { invoiceBody, welcomeBody } from '../../../test/support/sample-emails.ts';
