import type { Capacity, Ratio } from './measure.ts';

/** The median of some numbers (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * After `--repeat N`: per ratio, the median and the minimum across the runs,
 * one line each, exactly
 * `ratio_median <name> <median> min <min> target <target> runs <n>`
 * (`reference_median <name> <median> min <min> runs <n>` for a reference),
 * in the order the ratios were first printed. `runs` counts the runs that
 * printed that ratio.
 */
export function summaryLines(runs: ReadonlyArray<readonly Ratio[]>): string[] {
  const byName = new Map<string, Ratio[]>();
  for (const run of runs) for (const r of run) byName.set(r.name, [...(byName.get(r.name) ?? []), r]);
  return [...byName.entries()].map(([name, ratios]) => {
    const values = ratios.map((r) => r.value);
    const mid = median(values).toFixed(3);
    const min = Math.min(...values).toFixed(3);
    return ratios[0]!.reference
      ? `reference_median ${name} ${mid} min ${min} runs ${values.length}`
      : `ratio_median ${name} ${mid} min ${min} target ${ratios[0]!.target} runs ${values.length}`;
  });
}

/**
 * After `--repeat N`: per `capacity` line, the median and the minimum across
 * the runs, exactly `capacity_median <name> <median> min <min> <unit> runs <n>`.
 */
export function capacitySummaryLines(runs: ReadonlyArray<readonly Ratio[]>): string[] {
  const byName = new Map<string, Capacity[]>();
  for (const run of runs)
    for (const r of run)
      for (const c of r.capacity ?? []) byName.set(c.name, [...(byName.get(c.name) ?? []), c]);
  return [...byName.entries()].map(([name, cs]) => {
    const values = cs.map((c) => c.value);
    return `capacity_median ${name} ${median(values).toFixed(1)} min ${Math.min(...values).toFixed(1)} ${cs[0]!.unit} runs ${values.length}`;
  });
}

/** `ratio_median pixel 0.612 min 0.580 target 0.5 runs 3` → its parts; undefined when the line is not one. */
export function parseMedianLine(
  line: string,
): { name: string; median: number; min: number; target: number; runs: number } | undefined {
  const m = /^ratio_median ([a-z_]+) (\d+\.\d+) min (\d+\.\d+) target (\d+(?:\.\d+)?) runs (\d+)$/.exec(line);
  if (!m) return undefined;
  return { name: m[1]!, median: Number(m[2]), min: Number(m[3]), target: Number(m[4]), runs: Number(m[5]) };
}

/** `--repeat N` / `--repeat=N` (default 1); anything else is a usage error. */
export function parseArgs(args: readonly string[]): { repeat: number; repeatGiven: boolean } {
  let repeat: number | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    let value: string | undefined;
    if (arg === '--repeat') value = args[++i] ?? '';
    else if (arg.startsWith('--repeat=')) value = arg.slice('--repeat='.length);
    else throw new Error(`unknown argument ${JSON.stringify(arg)} (usage: npm run bench -- [--repeat N])`);
    if (!/^[1-9]\d?$/.test(value))
      throw new Error(`--repeat takes a whole number from 1 to 99, not ${JSON.stringify(value)}`);
    repeat = Number(value);
  }
  return { repeat: repeat ?? 1, repeatGiven: repeat !== undefined };
}
