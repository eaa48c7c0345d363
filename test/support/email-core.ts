import assert from 'node:assert/strict';
import { loadConfig, type Config } from '../../core/config.ts';
import { connectDatabase, type Database } from '../../core/db.ts';
import type { EmailService } from '../../core/email/contract.ts';
import { createEmailService, type EmailServiceDeps } from '../../core/email/service.ts';
import { isMailroomError, type MailroomError } from '../../core/errors.ts';
import { createLogger, type Logger } from '../../core/logger.ts';
import { createKeyStore, type KeyStore } from '../../core/api-keys/key-store.ts';
import type { Client } from '@temporalio/client';
import { createWebhooks, type Webhooks } from '../../core/webhooks/index.ts';
import { mongoUri, TEST_SECRET, uniqueName } from './env.ts';
import { FakeSendGrid } from './fake-sendgrid.ts';

/**
 * The real email core on a database of its own (dropped at close), sending
 * through the real SendGrid client to a FakeSendGrid over HTTP. The one
 * fixture behind the core tests, the email route tests and the workflow harness.
 */
export interface EmailCore {
  fake: FakeSendGrid;
  database: Database;
  config: Config;
  logger: Logger;
  email: EmailService;
  keys: KeyStore;
  /** Outbound webhooks, their outbox relayed to the Temporal client given to `useTemporal`. */
  webhooks: Webhooks;
  useTemporal(client: Client): void;
  close(): Promise<void>;
}

export interface EmailCoreOptions {
  /** Extra environment for loadConfig; `SENDGRID_API_KEY: ''` unsets the key. */
  env?: Record<string, string>;
  /** Prefix of the database's name (one database per fixture). */
  name?: string;
  service?: Pick<EmailServiceDeps, 'fetchAttachment' | 'attachmentAllowedAddresses'>;
  /** Emit the driver's command events on `database.client` (tests of the access path). */
  monitorCommands?: boolean;
}

export async function startEmailCore(options: EmailCoreOptions = {}): Promise<EmailCore> {
  const fake = await new FakeSendGrid().start();
  const database = await connectDatabase(mongoUri(), uniqueName(options.name ?? 'email'), {
    monitorCommands: options.monitorCommands ?? false,
  });
  const config = loadConfig({
    MONGODB_URI: mongoUri(),
    SENDGRID_API_KEY: 'SG.test',
    SENDGRID_BASE_URL: fake.url,
    BLOCKED_EMAIL_DOMAINS: 'blocked.example',
    PUBLIC_BASE_URL: 'http://mailroom.test',
    // The product's web app: the workflow emails' sign-in and dashboard links.
    APP_URL: 'https://app.mailroom.test',
    EMAIL_FROM: 'Mailroom <no-reply@mailroom.test>',
    LOG_LEVEL: 'silent',
    MAILROOM_SECRET: TEST_SECRET,
    // The route tests written against the identity headers run behind a "trusted
    // proxy"; test/auth tests run AUTH_MODE=api-key (the default) explicitly.
    AUTH_MODE: 'trusted-headers',
    // The links of the sample signup emails (test/support/sample-emails.ts).
    SIGNUP_LINK_ORIGINS: 'https://app.example,https://app.example.com',
    ...options.env,
  });
  const logger = createLogger('test', config);
  let temporal: Client | undefined;
  const webhooks = createWebhooks({ db: database.db, config, logger, temporal: () => temporal });
  await webhooks.ensureIndexes();
  const relay = webhooks.relay.start();
  const email = createEmailService({
    db: database.db,
    config,
    logger,
    lifecycle: webhooks.relay.sink,
    ...options.service,
  });
  await email.ensureIndexes();
  const keys = createKeyStore(database.db, logger);
  return {
    fake,
    keys,
    database,
    config,
    logger,
    email,
    webhooks,
    useTemporal(client) {
      temporal = client;
    },
    async close() {
      await relay.stop();
      await email.close();
      await fake.stop();
      await database.db.dropDatabase().catch(() => undefined);
      await database.close();
    },
  };
}

/** The MailroomError `promise` rejects with; fails the test when it resolves or rejects with anything else. */
export async function mailroomFailure(promise: Promise<unknown>): Promise<MailroomError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(isMailroomError(err), `expected a MailroomError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected a failure');
}
