import type { Server } from 'node:http';
import { Client, type Connection } from '@temporalio/client';
import { loadConfigOrExit } from '../core/config.ts';
import { connectDatabase, type Database } from '../core/db.ts';
import { createLogger, type Logger } from '../core/logger.ts';
import type { EmailService } from '../core/email/contract.ts';
import { createEmailService } from '../core/email/service.ts';
import { createKeyStore } from '../core/api-keys/key-store.ts';
import { createWebhooks } from '../core/webhooks/index.ts';
import { createApp } from './app.ts';
import { metricsApp, metricsStartupNotice } from './middleware/metrics.ts';
import { startScheduledOutbox, type OutboxHandle } from './routes/email/scheduled-runs.ts';
import { answerClientErrors } from './client-errors.ts';
import { limitConnectionsPerClient } from './connection-limit.ts';
import { gatewayTemporalConnection } from './temporal-deadlines.ts';
import { applyServerTimeouts } from './server-timeouts.ts';
import { gracefulDrain, type GracefulDrain } from './graceful-drain.ts';

/**
 * The gateway process: configuration, MongoDB, a Temporal client, the email
 * core, then HTTP. It starts even while Temporal is down (the client connects
 * lazily; /ready reports it) and waits for MongoDB with backoff, because in
 * docker compose or `npm run dev` the dependencies come up in any order.
 */
const config = loadConfigOrExit();
const logger = createLogger('api', config);

let shuttingDown = false;
let server: Server | undefined;
let drainer: GracefulDrain | undefined;
let metricsServer: Server | undefined;
let database: Database | undefined;
let email: EmailService | undefined;
let connection: Connection | undefined;
let relay: { stop(): Promise<void> } | undefined;
let outbox: OutboxHandle | undefined;

/** The URI without credentials, for log lines. */
const redact = (uri: string) => uri.replace(/\/\/[^@/]*@/, '//***@');

async function connectWithRetry(): Promise<Database> {
  let delayMs = 500;
  for (let attempt = 1; ; attempt++) {
    try {
      return await connectDatabase(config.mongodbUri);
    } catch (err) {
      if (shuttingDown) throw err;
      logger.warn(
        { attempt, err: err instanceof Error ? err.message : String(err) },
        `MongoDB not reachable at ${redact(config.mongodbUri)}; retrying in ${(delayMs / 1000).toFixed(1)}s`,
      );
      await new Promise((r) => setTimeout(r, delayMs));
      if (shuttingDown) throw err;
      delayMs = Math.min(delayMs * 2, 15_000);
    }
  }
}

async function main(): Promise<void> {
  database = await connectWithRetry();
  logger.info(`connected to MongoDB at ${redact(config.mongodbUri)}`);

  connection = gatewayTemporalConnection(config.temporal.address);
  const temporal = new Client({ connection, namespace: config.temporal.namespace });

  const webhooks = createWebhooks({ db: database.db, config, logger, temporal: () => temporal });
  await webhooks.ensureIndexes();
  relay = webhooks.relay.start();
  email = createEmailService({
    db: database.db,
    config,
    logger,
    warmRenderThreads: true,
    lifecycle: webhooks.relay.sink,
  });
  await email.ensureIndexes();

  const keys = createKeyStore(database.db, logger);
  const lifecycle = {
    get draining() {
      return drainer?.draining === true;
    },
  };
  const app = createApp({ config, logger, db: database.db, temporal, email, keys, webhooks, lifecycle });
  // Scheduled emails whose run could not be started (Temporal was down) get it here.
  outbox = startScheduledOutbox({ temporal, config, email, logger });
  server = app.listen(config.port);
  drainer = gracefulDrain(server);
  applyServerTimeouts(server);
  answerClientErrors(server);
  limitConnectionsPerClient(server, {
    perClient: config.maxConnectionsPerClient,
    trustedProxies: config.trustedProxies,
  });
  await new Promise<void>((resolve, reject) => {
    server!.once('listening', resolve);
    server!.once('error', reject);
  });
  logger.info(
    { temporal: config.temporal.address, namespace: config.temporal.namespace },
    `gateway listening on http://localhost:${config.port} (public base URL ${config.publicBaseUrl})`,
  );
  if (config.devInboxDir)
    logger.info(
      `dev inbox at http://localhost:${config.port}/dev/inbox, templates at /dev/templates (DEV_INBOX_DIR=${config.devInboxDir}; development only)`,
    );
  if (config.metricsPort !== undefined) {
    metricsServer = metricsApp(config.metricsToken).listen(config.metricsPort);
    await new Promise<void>((resolve, reject) => {
      metricsServer!.once('listening', resolve);
      metricsServer!.once('error', reject);
    });
    logger.info(`metrics on http://localhost:${config.metricsPort}/metrics`);
  }
  const metricsNotice = metricsStartupNotice(config);
  if (metricsNotice) logger.warn(metricsNotice);
  // Say so at start, not on the first event: without a key, anyone who learns an
  // email id could post delivery events for it.
  if (config.authMode === 'trusted-headers')
    logger.warn(
      'AUTH_MODE=trusted-headers: the X-Company-Id / X-Organization-Id / X-User-Id headers are believed as sent. ' +
        'Only run this behind a proxy that authenticates every caller and sets them; anyone reaching this port directly is any company.',
    );
  if (!config.sendgrid.webhookPublicKey)
    logger.warn(
      config.sendgrid.webhookAllowUnsigned
        ? 'SENDGRID_WEBHOOK_ALLOW_UNSIGNED=true: POST /api/email/webhooks/sendgrid accepts unsigned events (dev only; set SENDGRID_WEBHOOK_PUBLIC_KEY in production)'
        : 'SENDGRID_WEBHOOK_PUBLIC_KEY is not set: POST /api/email/webhooks/sendgrid refuses events (503) until it is',
    );
  if (config.signup.linkOrigins.length === 0)
    logger.warn(
      config.authMode === 'trusted-headers'
        ? 'SIGNUP_LINK_ORIGINS is not set: the links of unauthenticated signup sends (password-reset, welcome, verification) ' +
            "may point at any http(s) origin but the click redirect. Set it to your application's origins (e.g. https://app.example.com)."
        : 'SIGNUP_LINK_ORIGINS is not set: unauthenticated signup sends (password-reset, welcome, verification) are refused, ' +
            "as their links may point at no origin. Set it to your application's origins (e.g. https://app.example.com); sends with a key are not affected.",
    );
  if (!config.sendgrid.apiKey)
    logger.warn('SENDGRID_API_KEY is not set: every send fails with "email service not configured."');
}

async function shutdown(signal: string, log: Logger): Promise<void> {
  if (shuttingDown) return;
  shuttingDown = true;
  log.info(`${signal}: shutting down`);
  // Answer what was taken, requests already written included; cut only what outlives the grace.
  if (drainer) {
    const { cut } = await drainer.drain(config.shutdownGraceMs);
    if (cut > 0) log.warn({ cut, graceMs: config.shutdownGraceMs }, 'connections cut at the shutdown grace');
  }
  metricsServer?.closeAllConnections();
  if (metricsServer?.listening) await new Promise<void>((resolve) => metricsServer!.close(() => resolve()));
  await outbox?.stop();
  // The pixel's buffered opens go to the database before it closes (only a crash loses them).
  await email?.close().catch((err: unknown) => log.error({ err }, 'flushing buffered opens failed'));
  const stats = email?.openStats();
  if (stats?.dropped) log.warn({ dropped: stats.dropped }, 'pixel opens dropped while the buffer was full');
  // Webhook events not handed over yet stay in the outbox; any other process's recovery (or ours at the next start) hands them over.
  await relay?.stop();
  await Promise.allSettled([database?.close(), connection?.close()]);
  log.info('stopped');
  process.exit(0);
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => void shutdown(signal, logger));
}

main().catch((err: unknown) => {
  if (shuttingDown) return;
  logger.fatal({ err }, 'gateway failed to start');
  process.exit(1);
});
