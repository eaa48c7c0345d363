import { readFileSync, readlinkSync } from 'node:fs';

/**
 * A worker thread's time budget, counted in the thread's own CPU time where
 * the system tells it (Linux: /proc/<pid>/task/<tid>/stat), so a message is
 * never refused because the machine was busy with something else; elsewhere
 * in wall-clock time.
 */

/** How often a running thread's CPU time is read. */
const CHECK_MS = 50;
/** Linux reports CPU time in clock ticks of 1/100 s (USER_HZ, the same on every architecture Node runs on). */
const MS_PER_TICK = 10;

/** Called in the thread: where its CPU time can be read, or undefined (not Linux). */
export function threadStatPath(): string | undefined {
  try {
    return `/proc/${readlinkSync('/proc/thread-self')}/stat`;
  } catch {
    return undefined;
  }
}

/** The thread's user + system CPU time in ms; undefined once the thread is gone. */
function cpuMs(statPath: string): number | undefined {
  try {
    const stat = readFileSync(statPath, 'utf8');
    // Fields after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * MS_PER_TICK;
  } catch {
    return undefined;
  }
}

/**
 * Calls `exceeded` once the thread at `statPath` has spent `budgetMs` (from
 * now); returns the function that stops watching.
 */
export function watchThreadBudget(
  statPath: string | undefined,
  budgetMs: number,
  exceeded: () => void,
): () => void {
  const start = statPath === undefined ? undefined : cpuMs(statPath);
  if (statPath === undefined || start === undefined) {
    const timer = setTimeout(exceeded, budgetMs);
    return () => clearTimeout(timer);
  }
  const timer = setInterval(() => {
    const now = cpuMs(statPath);
    if (now !== undefined && now - start >= budgetMs) {
      clearInterval(timer);
      exceeded();
    }
  }, CHECK_MS);
  return () => clearInterval(timer);
}
