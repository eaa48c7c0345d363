import { existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { Connection } from '@temporalio/client';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import { devKey } from './dev-key.ts';
import { devSecret } from './dev-secret.ts';
import { startMailSink, type MailSink } from './mail-sink.ts';
import { provision } from './provision.ts';
import { startMongo, startTemporal, type ServiceHandle } from './services.ts';
import { RUN_TS, colorsWanted, portInUse, startProcess, type Spawned } from './processes.ts';

/**
 * `npm run dev`: everything Mailroom needs on one machine, one command.
 *
 *   Temporal dev server  127.0.0.1:7233, Web UI http://localhost:8233, history in .data/temporal.db
 *   MongoDB protocol     127.0.0.1:27017 (FerretDB over SQLite in .data/mongo/)
 *   mail sink            SendGrid-compatible, saves messages to .data/mail/;
 *                        the gateway shows them at /dev/inbox (templates at /dev/templates)
 *   worker               worker/worker.ts
 *   gateway              api/server.ts on PORT (3000)
 *
 * TEMPORAL_ADDRESS, MONGODB_URI or SENDGRID_API_KEY (environment or .env)
 * replace the embedded server / the sink with the real thing. DEV_TEMPORAL_PORT,
 * DEV_TEMPORAL_UI_PORT, DEV_MONGO_PORT and DEV_DATA_DIR move the embedded
 * servers and the local state (test/readme.test.ts runs a second platform so).
 */

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

const COLORS = { temporal: 35, mongo: 32, mail: 33, worker: 36, api: 34, dev: 1 } as const;
type Source = keyof typeof COLORS;
// Colours for a terminal only: redirected to a file or a pipe, the output is plain text,
// the children's own colour codes (pretty logs) taken out too.
const useColor = colorsWanted(process.stdout, process.env);
function say(source: Source, line: string): void {
  const tag = `[${source}]`.padEnd(10);
  console.log(
    useColor ? `\x1b[${COLORS[source]}m${tag}\x1b[0m ${line}` : `${tag} ${stripVTControlCharacters(line)}`,
  );
}

if (existsSync(join(ROOT, '.env'))) {
  process.loadEnvFile(join(ROOT, '.env'));
  say('dev', 'loaded .env');
}

const env = process.env;
const DATA = resolve(ROOT, env['DEV_DATA_DIR'] || '.data');
/** DATA as the banner names it: relative to the checkout when inside it (`.data`), else absolute. */
const SHOWN_DATA = relative(ROOT, DATA).startsWith('..') ? DATA : relative(ROOT, DATA) || '.';
const port = Number(env['PORT'] || 3000);
const ports = {
  temporal: Number(env['DEV_TEMPORAL_PORT'] || 7233),
  temporalUi: Number(env['DEV_TEMPORAL_UI_PORT'] || 8233),
  mongo: Number(env['DEV_MONGO_PORT'] || 27017),
};
const services: ServiceHandle[] = [];
const apps: Array<{ name: Source; proc: Spawned }> = [];
let sink: MailSink | undefined;
let stopping = false;

async function ensureFree(portNumber: number, what: string, instead: string): Promise<void> {
  if (await portInUse(portNumber)) {
    throw new Error(`port ${portNumber} (${what}) is already in use. Stop whatever holds it, or ${instead}.`);
  }
}

async function main(): Promise<void> {
  const started = Date.now();
  // Dev defaults (each yields to the environment or .env): headers trusted as
  // sent so the README's curl lines stay short, unsigned webhook events
  // accepted, outbound webhooks allowed to a receiver on 127.0.0.1, and a
  // secret kept under .data/.
  const childEnv: NodeJS.ProcessEnv = {
    AUTH_MODE: 'trusted-headers',
    SENDGRID_WEBHOOK_ALLOW_UNSIGNED: 'true',
    WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.1',
    ...env,
    MAILROOM_SECRET: env['MAILROOM_SECRET'] || devSecret(join(DATA, 'secret')),
    LOG_PRETTY: '1',
    PORT: String(port),
  };

  const needs = { temporal: !env['TEMPORAL_ADDRESS'], mongo: !env['MONGODB_URI'] };
  if (needs.temporal) {
    await ensureFree(
      ports.temporal,
      'Temporal gRPC',
      'set TEMPORAL_ADDRESS to use a Temporal server that is already running',
    );
    await ensureFree(
      ports.temporalUi,
      'Temporal Web UI',
      'set TEMPORAL_ADDRESS to use a Temporal server that is already running',
    );
  }
  if (needs.mongo) {
    await ensureFree(ports.mongo, 'MongoDB', 'set MONGODB_URI to use a MongoDB that is already running');
  }
  await ensureFree(port, 'gateway', 'set PORT to another port');

  const binaries = await provision(needs, (line) => say('dev', line));

  const startDevTemporal = (binary: string) =>
    startTemporal({
      binary,
      port: ports.temporal,
      uiPort: ports.temporalUi,
      dbFile: join(DATA, 'temporal.db'),
      logFile: join(DATA, 'logs', 'temporal.log'),
      // While stopping, servers complain about their clients going away: noise, kept in the log file only.
      onLine: (line) => stopping || say('temporal', line),
    });
  const startDevMongo = (binary: string) =>
    startMongo({
      binary,
      port: ports.mongo,
      dataDir: join(DATA, 'mongo'),
      logFile: join(DATA, 'logs', 'mongo.log'),
      onLine: (line) => stopping || say('mongo', line),
    });
  const { temporal: temporalBinary, ferretdb: ferretdbBinary } = binaries;
  const [temporal, mongo] = await Promise.all([
    temporalBinary ? startDevTemporal(temporalBinary) : undefined,
    ferretdbBinary ? startDevMongo(ferretdbBinary) : undefined,
  ]);
  // A server that dies (a crash, a kill) comes back on the same port and data, as the apps do.
  if (temporal && temporalBinary) keepRunning('temporal', temporal, () => startDevTemporal(temporalBinary));
  if (mongo && ferretdbBinary) keepRunning('mongo', mongo, () => startDevMongo(ferretdbBinary));
  if (temporal) {
    services.push(temporal);
    childEnv['TEMPORAL_ADDRESS'] = temporal.address;
    say(
      'temporal',
      `Temporal dev server on ${temporal.address}, Web UI ${temporal.uiUrl} (history: ${join(SHOWN_DATA, 'temporal.db')})`,
    );
  } else {
    say('temporal', `using TEMPORAL_ADDRESS=${env['TEMPORAL_ADDRESS']}`);
  }
  if (mongo) {
    services.push(mongo);
    childEnv['MONGODB_URI'] = `${mongo.uri}/mailroom`;
    say(
      'mongo',
      `MongoDB protocol (FerretDB) on ${mongo.uri}/mailroom (data: ${join(SHOWN_DATA, 'mongo')}/)`,
    );
  } else {
    say('mongo', 'using MONGODB_URI from the environment');
  }

  const inboxUrl = `http://localhost:${port}/dev/inbox`;
  if (env['SENDGRID_API_KEY']) {
    // A DEV_INBOX_DIR from .env would show a folder nothing writes to: the inbox is the sink's.
    delete childEnv['DEV_INBOX_DIR'];
    const endpoint = env['SENDGRID_BASE_URL'] ?? 'https://api.sendgrid.com';
    say('mail', `SENDGRID_API_KEY is set: mail goes to the SendGrid API at ${endpoint}`);
  } else {
    sink = await startMailSink({
      dir: join(DATA, 'mail'),
      log: (line) => say('mail', line),
      webhookUrl: `http://127.0.0.1:${port}/api/email/webhooks/sendgrid`,
      linkTo: (id) => `${inboxUrl}/messages/${encodeURIComponent(id)}`,
    });
    // "SG." prefix: @sendgrid/mail warns about keys without it; the sink accepts any key.
    childEnv['SENDGRID_API_KEY'] = 'SG.dev-sink';
    childEnv['SENDGRID_BASE_URL'] = sink.url;
    // Only while the sink is on: the gateway then serves the dev inbox (api/routes/dev/).
    childEnv['DEV_INBOX_DIR'] = sink.dir;
    say(
      'mail',
      `no SENDGRID_API_KEY: mail goes to the local sink (${sink.url}), saved in ${join(SHOWN_DATA, 'mail')}/ — nothing is delivered`,
    );
    say('mail', `dev inbox: ${inboxUrl} · template gallery: http://localhost:${port}/dev/templates`);
    say('mail', 'set SENDGRID_API_KEY (environment or .env) to send through real SendGrid');
  }

  await runApp('worker', join(ROOT, 'worker', 'worker.ts'), childEnv);
  await runApp('api', join(ROOT, 'api', 'server.ts'), childEnv);
  if (!(await waitForPlatform(`http://127.0.0.1:${port}/ready`, childEnv))) return;
  await announceDevKey(childEnv);
  say(
    'dev',
    `ready in ${((Date.now() - started) / 1000).toFixed(1)}s: gateway http://localhost:${port}` +
      (temporal ? `, Temporal UI ${temporal.uiUrl}` : '') +
      (sink ? `, dev inbox ${inboxUrl}` : '') +
      ' — Ctrl-C stops everything',
  );
}

/** Says which auth mode runs, and prints a key for trying AUTH_MODE=api-key. */
async function announceDevKey(childEnv: NodeJS.ProcessEnv): Promise<void> {
  const mode = childEnv['AUTH_MODE'];
  say(
    'dev',
    mode === 'trusted-headers'
      ? `AUTH_MODE=${mode}: identity headers are believed as sent (never expose this port)`
      : `AUTH_MODE=${mode}: every protected route needs Authorization: Bearer <key>`,
  );
  try {
    const made = await devKey(childEnv['MONGODB_URI']!, join(DATA, 'dev-key.json'));
    say(
      'dev',
      `API key for AUTH_MODE=api-key (company ${made.companyId}, company-wide, every scope; send as organization ${made.organizationId}): ${made.key}`,
    );
  } catch (err) {
    say('dev', `could not prepare a dev API key: ${err instanceof Error ? err.message : String(err)}`);
  }
}

const TASK_QUEUE_TYPE_WORKFLOW = 1; // temporal.api.enums.v1.TaskQueueType

/**
 * "Ready" means a workflow can run end to end: the gateway answers /ready
 * (MongoDB and Temporal reachable) and a worker polls the task queue.
 */
async function waitForPlatform(readyUrl: string, childEnv: NodeJS.ProcessEnv): Promise<boolean> {
  const deadline = Date.now() + 180_000;
  const namespace = childEnv['TEMPORAL_NAMESPACE'] || 'default';
  const taskQueue = childEnv['TEMPORAL_TASK_QUEUE'] || 'mailroom';
  let connection: Connection | undefined;
  try {
    while (!stopping && Date.now() < deadline) {
      try {
        const gateway = await fetch(readyUrl, { signal: AbortSignal.timeout(2000) });
        if (gateway.ok) {
          connection ??= await Connection.connect({
            address: childEnv['TEMPORAL_ADDRESS']!,
            connectTimeout: 2000,
          });
          const { pollers } = await connection.workflowService.describeTaskQueue({
            namespace,
            taskQueue: { name: taskQueue },
            taskQueueType: TASK_QUEUE_TYPE_WORKFLOW,
          });
          if ((pollers ?? []).length > 0) return true;
        }
      } catch {
        // not up yet
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    await connection?.close();
  }
  if (!stopping)
    say('dev', `no worker polls task queue ${taskQueue} or ${readyUrl} fails; see the lines above`);
  return false;
}

/** An app that ran at least this long before it exited is started again (a crash, a kill); sooner, it is a cause to fix. */
const RESTART_AFTER_RUNNING_MS = 5_000;

/**
 * Starts the gateway or the worker, and starts it again when it dies after
 * running a while (a crash, or a kill to see what runs survive: Temporal
 * hands their work to the new worker), as a process manager would in
 * production. One that exits within RESTART_AFTER_RUNNING_MS of starting has
 * a cause to fix first (its lines above say which): it is left stopped.
 */
async function runApp(name: 'worker' | 'api', entry: string, childEnv: NodeJS.ProcessEnv): Promise<void> {
  const startedAt = Date.now();
  const proc = await startProcess(name, process.execPath, [RUN_TS, entry], {
    cwd: ROOT,
    env: childEnv,
    logFile: join(DATA, 'logs', `${name}.log`),
    onLine: (line) => say(name, line),
  });
  apps.push({ name, proc });
  void proc.exited.then(({ code, signal }) => {
    if (stopping) return;
    const ran = Date.now() - startedAt;
    if (ran < RESTART_AFTER_RUNNING_MS) {
      say(name, `exited (code ${code}, signal ${signal}); fix the cause and restart npm run dev`);
      return;
    }
    say(name, `exited (code ${code}, signal ${signal}) after ${Math.round(ran / 1000)} s; starting it again`);
    apps.splice(
      apps.findIndex((app) => app.proc === proc),
      1,
    );
    void runApp(name, entry, childEnv).catch((err: unknown) =>
      say(name, `could not start again: ${String(err)}`),
    );
  });
}

/**
 * Starts a dev server again on the same port and data when it exits while
 * npm run dev runs: the gateway and the worker reconnect by themselves, and
 * Temporal's history and FerretDB's records are on disk.
 */
function keepRunning(
  source: 'temporal' | 'mongo',
  handle: ServiceHandle,
  start: () => Promise<ServiceHandle>,
): void {
  void handle.exited.then(async ({ code, signal }) => {
    if (stopping) return;
    say(source, `${handle.name} exited (code ${code}, signal ${signal}); starting it again`);
    services.splice(services.indexOf(handle), 1);
    try {
      const again = await start();
      if (stopping) return void (await again.stop());
      services.push(again);
      say(source, `${again.name} is back on the same port and data`);
      keepRunning(source, again, start);
    } catch (err) {
      say(
        source,
        `could not start it again: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`,
      );
    }
  });
}

/** Apps first (they drain work and close connections), then the mail sink and servers. */
async function stopAll(): Promise<void> {
  await Promise.allSettled(apps.map(({ proc }) => proc.stop(10_000)));
  await sink?.stop();
  await Promise.allSettled(services.map((s) => s.stop()));
}

async function shutdown(reason: string, code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  say('dev', `${reason}: stopping…`);
  await stopAll();
  say('dev', 'stopped');
  process.exit(code);
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    // A second Ctrl-C while stopping: leave now; the 'exit' hook in services.ts kills what is left.
    if (stopping) process.exit(130);
    void shutdown(signal, 0);
  });
}

main().catch((err: unknown) => {
  say('dev', `failed: ${err instanceof Error ? err.message : String(err)}`);
  void shutdown('startup failed', 1);
});
