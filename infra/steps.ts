import { spawn } from 'node:child_process';
import { constants, createWriteStream } from 'node:fs';
import { access, mkdir, readFile } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';

/**
 * What every provisioning step shares: its progress lines, the PATH lookup
 * that decides whether a tool is already there, and the runner that gives a
 * long install a log file and a heartbeat.
 */

export type ProgressLog = (line: string) => void;
export const defaultLog: ProgressLog = (line) => console.log(`[provision] ${line}`);

export const elapsed = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)}s`;

export async function isExecutable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first executable `command` in the directories of `path` (the process's PATH unless given). */
export async function findOnPath(
  command: string,
  path: string = process.env['PATH'] ?? '',
): Promise<string | undefined> {
  for (const dir of path.split(delimiter)) {
    if (dir && (await isExecutable(join(dir, command)))) return join(dir, command);
  }
  return undefined;
}

/**
 * Runs a long command with its output going to a log file (shown on failure)
 * and a heartbeat line every few seconds, so a slow step never looks hung.
 */
export async function runStep(
  what: string,
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; logFile: string; log: ProgressLog },
): Promise<void> {
  const started = Date.now();
  await mkdir(dirname(options.logFile), { recursive: true });
  const out = createWriteStream(options.logFile);
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.pipe(out, { end: false });
  child.stderr.pipe(out, { end: false });
  const heartbeat = setInterval(() => {
    options.log(`  … still ${what} (${Math.round((Date.now() - started) / 1000)}s)`);
  }, 5000);
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (c) => resolve(c));
    });
    await new Promise<void>((resolve) => out.end(resolve));
    if (code !== 0) {
      const tail = (await readFile(options.logFile, 'utf8')).split('\n').slice(-25).join('\n');
      throw new Error(`${what} failed (exit ${code}); full log: ${options.logFile}\n${tail}`);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error(`${what}: \`${command}\` was not found on PATH`, { cause: err });
    }
    throw err;
  } finally {
    clearInterval(heartbeat);
    out.end();
  }
}
