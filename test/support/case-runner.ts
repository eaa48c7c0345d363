import { rm } from 'node:fs/promises';

/**
 * What the fault suite (test/faults/run.ts) and the scale suite
 * (test/scale/run.ts) share: a case run with its figures and problems
 * printed, the summary at the end, and the exit code.
 */

/** What a case found: held or not, with the figures it measured and what went wrong. */
export interface CaseResult {
  ok: boolean;
  figures: Record<string, unknown>;
  problems: string[];
}

export interface CaseOutcome {
  name: string;
  ok: boolean;
  seconds: number;
}

/** Runs one case, printing its figures and problems; a throw is a failed case, never the end of the suite. */
export async function runCase(
  log: (line: string) => void,
  name: string,
  run: () => Promise<CaseResult>,
): Promise<CaseOutcome> {
  const t0 = Date.now();
  let ok = false;
  try {
    const result = await run();
    for (const [k, v] of Object.entries(result.figures)) log(`  ${k}: ${JSON.stringify(v)}`);
    for (const p of result.problems) log(`  PROBLEM: ${p}`);
    ok = result.ok;
  } catch (err) {
    log(`  ERROR: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  }
  const seconds = Math.round((Date.now() - t0) / 100) / 10;
  log(`  ${name} ${ok ? 'held' : 'FAILED'} in ${seconds}s`);
  return { name, ok, seconds };
}

/**
 * The summary of every case, and the exit code: 0 when all `expected` cases
 * ran and held. The scratch directory (logs) is removed then, kept otherwise.
 */
export async function summarize(
  log: (line: string) => void,
  results: CaseOutcome[],
  expected: number,
  started: number,
  scratch: string,
): Promise<number> {
  log('summary:');
  for (const r of results) log(`  ${r.ok ? 'held  ' : 'FAILED'} ${r.name} ${r.seconds}s`);
  log(`total ${((Date.now() - started) / 1000).toFixed(0)}s`);
  const ok = results.length === expected && results.every((r) => r.ok);
  if (ok) await rm(scratch, { recursive: true, force: true });
  else log(`logs kept in ${scratch}`);
  return ok ? 0 : 1;
}

/** Runs a suite's `main` and exits with its code; a throw before any case is printed and exits 1. */
export async function exitWith(tag: string, main: () => Promise<number>): Promise<never> {
  let code = 1;
  try {
    code = await main();
  } catch (err) {
    console.error(`[${tag}] ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  }
  process.exit(code);
}
