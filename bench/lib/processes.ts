import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startProcess, type Spawned } from '../../infra/services.ts';

export const ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));

export interface NodeProcess extends Spawned {
  name: string;
  pid: number;
  logFile: string;
}

/**
 * A TypeScript entry point in its own Node process (`node --import tsx`, so the
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
  const spawned = await startProcess(
    name,
    process.execPath,
    [...nodeArgs, '--import', 'tsx', join(ROOT, script)],
    { env: { ...process.env, ...env }, cwd: ROOT, logFile },
  );
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

/** Polls `url` until it answers 200 (or the process exits, or `timeoutMs` passes). */
export async function waitForHttp(proc: NodeProcess, url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void proc.exited.then(() => (exited = true));
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (exited) throw new Error(`${proc.name} exited before answering ${url}; log: ${proc.logFile}`);
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.status === 200) return;
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
