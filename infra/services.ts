import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, openSync, closeSync, type WriteStream } from 'node:fs';
import { mkdir, readFile, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { stripVTControlCharacters } from 'node:util';
import { Connection } from '@temporalio/client';
import { MongoClient } from 'mongodb';
import { SEARCH_ATTRIBUTES } from '../core/workflows/search-attributes.ts';

/**
 * Starts and stops the local Temporal and MongoDB-protocol servers. One module
 * for both `npm run dev` and the test runner, so what tests run against is
 * exactly what developers run.
 *
 * Each server runs in its own process group (so stopping it also stops
 * anything it spawned) and is killed when this process exits, even on an
 * uncaught error. A server counts as started only once it really answers.
 */

/**
 * Runs a TypeScript entry point: `node RUN_TS <entry.ts>` (bin/run-ts.mjs: tsx in
 * the main thread only, so the Temporal worker's workflow thread starts without it).
 */
export const RUN_TS = fileURLToPath(new URL('../bin/run-ts.mjs', import.meta.url));

export interface ServiceHandle {
  name: string;
  pid: number;
  logFile: string;
  /** SIGTERM to the process group, SIGKILL after the grace period; resolves once it is gone. */
  stop(): Promise<void>;
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

export interface OutputOptions {
  /** Everything the server prints goes here (appended). */
  logFile: string;
  /** Also hand each line to this callback (npm run dev prints them with a prefix). */
  onLine?: (line: string) => void;
}

/** A port nobody is listening on right now (the OS picks it). */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** True when something already listens on host:port (so we would collide with it). */
export async function portInUse(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(true));
    server.listen(port, host, () => server.close(() => resolve(false)));
  });
}

// Process groups still running; killed synchronously if this process exits without stopping them.
const running = new Set<number>();
process.on('exit', () => {
  for (const pid of running) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

export interface Spawned {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM to the process group, SIGKILL after `graceMs`; resolves once it is gone. */
  stop(graceMs: number): Promise<void>;
}

export interface ProcessOptions extends OutputOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/** Any long-running child (the gateway and worker under `npm run dev` too), in its own process group. */
export async function startProcess(
  name: string,
  command: string,
  args: string[],
  output: ProcessOptions,
): Promise<Spawned> {
  const base = { detached: true, env: output.env ?? process.env, cwd: output.cwd };
  await mkdir(dirname(output.logFile), { recursive: true });
  let child: ChildProcess;
  let stream: WriteStream | undefined;
  if (output.onLine) {
    // Piped: lines go to the callback and to the log file.
    stream = createWriteStream(output.logFile, { flags: 'a' });
    child = spawn(command, args, { ...base, stdio: ['ignore', 'pipe', 'pipe'] });
    for (const source of [child.stdout, child.stderr]) {
      if (!source) continue;
      const lines = createInterface({ input: source });
      lines.on('line', (line) => {
        // The file gets plain text; colours are for the terminal only.
        stream?.write(`${stripVTControlCharacters(line)}\n`);
        output.onLine?.(line);
      });
    }
  } else {
    // Straight to the file: no dependence on this process reading a pipe.
    const fd = openSync(output.logFile, 'a');
    child = spawn(command, args, { ...base, stdio: ['ignore', fd, fd] });
    closeSync(fd);
  }
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      if (child.pid) running.delete(child.pid);
      stream?.end();
      resolve({ code, signal });
    });
  });
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (err) =>
      reject(new Error(`${name}: could not run ${command}: ${err.message}`, { cause: err })),
    );
  });
  const pid = child.pid!;
  running.add(pid);

  let stopping: Promise<void> | undefined;
  const stop = (graceMs: number): Promise<void> => {
    stopping ??= (async () => {
      if (!running.has(pid)) return;
      signalGroup(pid, 'SIGTERM');
      const timer = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), graceMs).unref());
      if ((await Promise.race([exited, timer])) === 'timeout') {
        signalGroup(pid, 'SIGKILL');
        await exited;
      }
      // Children the server itself spawned share its group; make sure none outlives it.
      signalGroup(pid, 'SIGKILL');
    })();
    return stopping;
  };
  return { child, exited, stop };
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is gone already
  }
}

async function logTail(logFile: string, lines = 20): Promise<string> {
  try {
    const text = await readFile(logFile, 'utf8');
    return text.trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/**
 * Polls `probe` until it succeeds; fails fast if the process exits, and after
 * `timeoutMs` with the last probe error. Either way the message names the
 * server, where it was expected and where its log is.
 */
async function waitUntilReady(
  name: string,
  where: string,
  spawned: Spawned,
  logFile: string,
  timeoutMs: number,
  probe: () => Promise<void>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  void spawned.exited.then((e) => (exit = e));
  let lastError = 'no answer yet';
  while (Date.now() < deadline) {
    if (exit) {
      throw new Error(
        `${name} exited (code ${exit.code}, signal ${exit.signal}) before answering on ${where}; log: ${logFile}\n${await logTail(logFile)}`,
      );
    }
    try {
      await probe();
      return;
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  await spawned.stop(2000);
  throw new Error(
    `${name} did not answer on ${where} within ${timeoutMs / 1000}s (last error: ${lastError}); log: ${logFile}\n${await logTail(logFile)}`,
  );
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
  if (options.headless) args.push('--headless');
  else args.push('--ui-port', String(options.uiPort ?? options.port + 1000), '--ui-disable-news-fetch');
  if (options.dbFile) {
    await mkdir(dirname(options.dbFile), { recursive: true });
    args.push('--db-filename', options.dbFile);
  }
  if (namespace !== 'default') args.push('--namespace', namespace);
  // The runs' custom search attributes (all Keyword), registered on every namespace at start.
  for (const key of SEARCH_ATTRIBUTES) args.push('--search-attribute', `${key.name}=Keyword`);

  const spawned = await startProcess('Temporal', options.binary, args, options);
  await waitUntilReady(
    'Temporal',
    address,
    spawned,
    options.logFile,
    options.timeoutMs ?? 60_000,
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
  return {
    name: 'Temporal',
    pid: spawned.child.pid!,
    logFile: options.logFile,
    address,
    uiUrl: options.headless ? undefined : `http://${host}:${options.uiPort ?? options.port + 1000}`,
    // Temporal flushes SQLite on SIGTERM; give it time before SIGKILL.
    stop: () => spawned.stop(10_000),
  };
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
  const spawned = await startProcess(
    'MongoDB (FerretDB)',
    options.binary,
    ['-listen', listen, '-data', options.dataDir],
    options,
  );
  await waitUntilReady(
    'MongoDB (FerretDB)',
    listen,
    spawned,
    options.logFile,
    options.timeoutMs ?? 30_000,
    async () => {
      const client = new MongoClient(uri, { serverSelectionTimeoutMS: 1000, connectTimeoutMS: 1000 });
      try {
        await client.db('admin').command({ ping: 1 });
      } finally {
        await client.close();
      }
    },
  );
  return {
    name: 'MongoDB (FerretDB)',
    pid: spawned.child.pid!,
    logFile: options.logFile,
    uri,
    stop: () => spawned.stop(5000),
  };
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
