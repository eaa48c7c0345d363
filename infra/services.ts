import { mkdir, readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Connection } from '@temporalio/client';
import { MongoClient } from 'mongodb';
import { SEARCH_ATTRIBUTES } from '../core/workflows/search-attributes.ts';
import { freePort, startProcess, waitUntilReady, type OutputOptions } from './processes.ts';

/**
 * Starts and stops the local Temporal and MongoDB-protocol servers. One module
 * for both `npm run dev` and the test runner, so what tests run against is
 * exactly what developers run. A server counts as started only once it really
 * answers (infra/processes.ts runs and stops the processes).
 */

export interface ServiceHandle {
  name: string;
  pid: number;
  logFile: string;
  /** SIGTERM to the process group, SIGKILL after the grace period; resolves once it is gone. */
  stop(): Promise<void>;
  /** Resolves when the process exits, for whatever reason. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface TemporalHandle extends ServiceHandle {
  /** host:port of the gRPC frontend. */
  address: string;
  /** Web UI, unless started headless. */
  uiUrl: string | undefined;
}

export interface MongoHandle extends ServiceHandle {
  /** mongodb:// URI without a database name. */
  uri: string;
}

/**
 * Runs `command args` as the server `name` and waits until `probe` succeeds
 * (it is expected on `where`); stopping it allows `graceMs` before SIGKILL.
 */
async function startServer(
  name: string,
  where: string,
  command: string,
  args: string[],
  options: OutputOptions & { timeoutMs: number; graceMs: number },
  probe: () => Promise<void>,
): Promise<ServiceHandle> {
  const spawned = await startProcess(name, command, args, options);
  await waitUntilReady(name, where, spawned, options.logFile, options.timeoutMs, probe);
  return {
    name,
    pid: spawned.child.pid!,
    logFile: options.logFile,
    stop: () => spawned.stop(options.graceMs),
    exited: spawned.exited,
  };
}

export interface TemporalOptions extends OutputOptions {
  /** Path of the `temporal` CLI (infra/provision.ts). */
  binary: string;
  port: number;
  /** Web UI port; ignored when headless. */
  uiPort?: number;
  headless?: boolean;
  /** SQLite file for history; omit for in-memory (gone when the server stops). */
  dbFile?: string;
  namespace?: string;
  host?: string;
  timeoutMs?: number;
}

/**
 * What Mailroom needs of a Temporal server beyond its defaults, the same as
 * infra/temporal-dynamic-config.yaml for docker compose: task queue fairness,
 * so each company's runs take turns with other companies' (runs carry their
 * company as fairness key: core/workflows/fairness.ts), on one partition per
 * task queue, where the server keeps those turns exactly (with the default
 * four, each partition keeps its own: a company's backlog then still
 * delays others').
 */
export const TEMPORAL_DYNAMIC_CONFIG = {
  'matching.enableFairness': true,
  'matching.numTaskqueueReadPartitions': 1,
  'matching.numTaskqueueWritePartitions': 1,
} as const;

/**
 * `temporal server start-dev`: a full Temporal server (frontend, history,
 * matching, SQLite) in one process. The dev server picks the ports of its
 * internal services itself, free a moment before it binds them, so another
 * process starting alongside (FerretDB on a `freePort()`, a test's server)
 * can take one in between: the server then exits with "address already in
 * use" (seen once in a bench run). That start is retried, up to 3 attempts;
 * any other failure is reported at once.
 */
export async function startTemporal(options: TemporalOptions): Promise<TemporalHandle> {
  for (let attempt = 1; ; attempt++) {
    const logStart = await stat(options.logFile).then(
      (s) => s.size,
      () => 0,
    );
    try {
      return await startTemporalOnce(options);
    } catch (err) {
      const log = await readFile(options.logFile).then(
        (b) => b.subarray(logStart).toString('utf8'),
        () => '',
      );
      if (attempt >= 3 || !log.includes('address already in use')) throw err;
    }
  }
}

async function startTemporalOnce(options: TemporalOptions): Promise<TemporalHandle> {
  const host = options.host ?? '127.0.0.1';
  const namespace = options.namespace ?? 'default';
  const address = `${host}:${options.port}`;
  const args = ['server', 'start-dev', '--ip', host, '--port', String(options.port), '--log-level', 'warn'];
  const uiPort = options.uiPort ?? options.port + 1000;
  if (options.headless) args.push('--headless');
  else args.push('--ui-port', String(uiPort), '--ui-disable-news-fetch');
  if (options.dbFile) {
    await mkdir(dirname(options.dbFile), { recursive: true });
    args.push('--db-filename', options.dbFile);
  }
  if (namespace !== 'default') args.push('--namespace', namespace);
  // The runs' custom search attributes (all Keyword), registered on every namespace at start.
  for (const key of SEARCH_ATTRIBUTES) args.push('--search-attribute', `${key.name}=Keyword`);
  for (const [key, value] of Object.entries(TEMPORAL_DYNAMIC_CONFIG))
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  const server = await startServer(
    'Temporal',
    address,
    options.binary,
    args,
    // Temporal flushes SQLite on SIGTERM; give it time before SIGKILL.
    { ...options, timeoutMs: options.timeoutMs ?? 60_000, graceMs: 10_000 },
    async () => {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      try {
        await connection.workflowService.getSystemInfo({});
        // The namespace is registered a moment after the frontend answers.
        await connection.workflowService.describeNamespace({ namespace });
      } finally {
        await connection.close();
      }
    },
  );
  return { ...server, address, uiUrl: options.headless ? undefined : `http://${host}:${uiPort}` };
}

export interface MongoOptions extends OutputOptions {
  /** Path of mailroom-ferretdb (infra/provision.ts). */
  binary: string;
  port: number;
  dataDir: string;
  host?: string;
  timeoutMs?: number;
}

/** FerretDB over SQLite (infra/ferretdb): speaks the MongoDB wire protocol on `port`. */
export async function startMongo(options: MongoOptions): Promise<MongoHandle> {
  const host = options.host ?? '127.0.0.1';
  const listen = `${host}:${options.port}`;
  const uri = `mongodb://${listen}`;
  await mkdir(options.dataDir, { recursive: true });
  const server = await startServer(
    'MongoDB (FerretDB)',
    listen,
    options.binary,
    ['-listen', listen, '-data', options.dataDir],
    { ...options, timeoutMs: options.timeoutMs ?? 30_000, graceMs: 5000 },
    async () => {
      const client = new MongoClient(uri, { serverSelectionTimeoutMS: 1000, connectTimeoutMS: 1000 });
      try {
        await client.db('admin').command({ ping: 1 });
      } finally {
        await client.close();
      }
    },
  );
  return { ...server, uri };
}

/**
 * Throwaway servers for one test or bench run, on free ports: a headless
 * Temporal (in-memory history: nothing to clean up, nothing to survive) and
 * FerretDB with its data and both logs in `scratch`. Only those whose binary
 * is given are started.
 */
export async function startScratchServers(
  binaries: { temporal?: string | undefined; ferretdb?: string | undefined },
  scratch: string,
): Promise<{ temporal: TemporalHandle | undefined; mongo: MongoHandle | undefined }> {
  const [temporal, mongo] = await Promise.all([
    binaries.temporal
      ? startTemporal({
          binary: binaries.temporal,
          port: await freePort(),
          headless: true,
          logFile: join(scratch, 'temporal.log'),
        })
      : undefined,
    binaries.ferretdb
      ? startMongo({
          binary: binaries.ferretdb,
          port: await freePort(),
          dataDir: join(scratch, 'mongo'),
          logFile: join(scratch, 'mongo.log'),
        })
      : undefined,
  ]);
  return { temporal, mongo };
}
