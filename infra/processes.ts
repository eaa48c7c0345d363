import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, openSync, closeSync, type WriteStream } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { stripVTControlCharacters } from 'node:util';

/**
 * Long-running child processes for `npm run dev`, the tests and the bench:
 * free ports, a start with its output in a log file, a stop of the whole
 * process group, and the wait until a server answers.
 *
 * Each child runs in its own process group (so stopping it also stops
 * anything it spawned) and is killed when this process exits, even on an
 * uncaught error.
 */

/**
 * Runs a TypeScript entry point: `node RUN_TS <entry.ts>` (bin/run-ts.mjs: tsx in
 * the main thread only, so the Temporal worker's workflow thread starts without it).
 */
export const RUN_TS = fileURLToPath(new URL('../bin/run-ts.mjs', import.meta.url));

export interface OutputOptions {
  /** Everything the server prints goes here (appended). */
  logFile: string;
  /** Also hand each line to this callback (npm run dev prints them with a prefix). */
  onLine?: (line: string) => void;
}

/**
 * Whether lines written to `stream` may carry colour codes: on a terminal
 * only (not `TERM=dumb`). `NO_COLOR` (set and not empty) always turns them
 * off; otherwise `FORCE_COLOR` decides when set (empty, `1`, `2`, `3` or
 * `true`: on; anything else, such as `0`: off).
 */
export function colorsWanted(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  if (env['NO_COLOR']) return false;
  const force = env['FORCE_COLOR'];
  if (force !== undefined) return ['', '1', '2', '3', 'true'].includes(force);
  return stream.isTTY === true && env['TERM'] !== 'dumb';
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
export async function waitUntilReady(
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
