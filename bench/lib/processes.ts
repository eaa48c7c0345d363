import { readFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RUN_TS, startProcess, type Spawned } from '../../infra/processes.ts';

export const ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));

export interface NodeProcess extends Spawned {
  name: string;
  pid: number;
  logFile: string;
}

/**
 * A TypeScript entry point in its own Node process (`node bin/run-ts.mjs`, so the
 * pid is the process doing the work, not a wrapper): the gateway, the worker,
 * the floors. Its output goes to `logFile`.
 */
export async function startNode(
  name: string,
  script: string,
  env: NodeJS.ProcessEnv,
  logFile: string,
  nodeArgs: string[] = [],
): Promise<NodeProcess> {
  const spawned = await startProcess(name, process.execPath, [...nodeArgs, RUN_TS, join(ROOT, script)], {
    env: { ...process.env, ...env },
    cwd: ROOT,
    logFile,
  });
  return { ...spawned, name, pid: spawned.child.pid!, logFile };
}

/** Peak resident set size of a live process in MiB (Linux `VmHWM`); undefined elsewhere. */
export async function peakRssMiB(pid: number): Promise<number | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmHWM:\s+(\d+) kB/m.exec(status)?.[1];
    return kb === undefined ? undefined : Number(kb) / 1024;
  } catch {
    return undefined;
  }
}

/** CPU time (user + system) a live process has used so far, in seconds (Linux `/proc`); undefined elsewhere. */
export async function cpuSeconds(pid: number): Promise<number | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): state is the 3rd, utime the 14th, stime the 15th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // USER_HZ is 100 on Linux
  } catch {
    return undefined;
  }
}

/**
 * How busy each process was while `fn` ran: CPU seconds ÷ wall seconds
 * (1.0 = one core all the time). Names whose pid is unknown are left out.
 */
export async function cpuDuring<T>(
  pids: Record<string, number | undefined>,
  fn: () => Promise<T>,
): Promise<{ result: T; cores: Record<string, number> }> {
  const named = Object.entries(pids).filter((e): e is [string, number] => e[1] !== undefined);
  const before = await Promise.all(named.map(([, pid]) => cpuSeconds(pid)));
  const t0 = performance.now();
  const result = await fn();
  const wall = (performance.now() - t0) / 1000;
  const after = await Promise.all(named.map(([, pid]) => cpuSeconds(pid)));
  const cores: Record<string, number> = {};
  named.forEach(([name], i) => {
    const [b, a] = [before[i], after[i]];
    if (a !== undefined && b !== undefined) cores[name] = (a - b) / wall;
  });
  return { result, cores };
}

/**
 * Waits until the given processes are idle again (together under `idleCores`
 * over a 250 ms window), at most `maxMs`: after a burst, Temporal and
 * FerretDB go on with background work (visibility, queues, checkpoints) for a
 * while, and the next measurement should not pay for the previous one's.
 */
export async function settle(
  pids: Array<number | undefined>,
  opts: { idleCores?: number; maxMs?: number } = {},
): Promise<void> {
  const known = pids.filter((p): p is number => p !== undefined);
  const started = performance.now();
  const total = async () => {
    const each = await Promise.all(known.map((pid) => cpuSeconds(pid)));
    return each.reduce<number>((sum, s) => sum + (s ?? 0), 0);
  };
  while (performance.now() - started < (opts.maxMs ?? 10_000)) {
    const before = await total();
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, 250));
    const cores = ((await total()) - before) / ((performance.now() - t0) / 1000);
    if (cores < (opts.idleCores ?? 0.15)) return;
  }
}

/** `worker 0.92, FerretDB 0.71, …` */
export const formatCores = (cores: Record<string, number>): string =>
  Object.entries(cores)
    .map(([name, c]) => `${name} ${c.toFixed(2)}`)
    .join(', ');

/** Polls `url` until it answers 200, or anything with `anyStatus` (or the process exits, or `timeoutMs` passes). */
export async function waitForHttp(
  proc: NodeProcess,
  url: string,
  timeoutMs = 60_000,
  opts: { anyStatus?: boolean } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void proc.exited.then(() => (exited = true));
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (exited) throw new Error(`${proc.name} exited before answering ${url}; log: ${proc.logFile}`);
    try {
      const res = await fetch(url, { redirect: 'manual' });
      await res.arrayBuffer();
      if (res.status === 200 || opts.anyStatus) return;
      last = `status ${res.status}`;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(
    `${proc.name} did not answer ${url} within ${timeoutMs / 1000}s (${last}); log: ${proc.logFile}`,
  );
}

/** Resolves when `text` appears in the process's log file. */
export async function waitForLog(proc: NodeProcess, text: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void proc.exited.then(() => (exited = true));
  while (Date.now() < deadline) {
    const log = await readFile(proc.logFile, 'utf8').catch(() => '');
    if (log.includes(text)) return;
    if (exited) throw new Error(`${proc.name} exited before logging "${text}"; log: ${proc.logFile}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${proc.name} did not log "${text}" within ${timeoutMs / 1000}s; log: ${proc.logFile}`);
}
