import { performance } from 'node:perf_hooks';

/** One measured path: throughput and latency percentiles (milliseconds). */
export interface Figures {
  name: string;
  /** Operations per second over the whole measurement. */
  ops: number;
  /** Wall time of the measurement. */
  seconds: number;
  count: number;
  p50: number;
  p95: number;
  p99: number;
  /** Every operation's time, ascending (so rounds can be combined). */
  latencies: number[];
}

export function figures(name: string, latencies: number[], seconds: number): Figures {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return {
    name,
    ops: sorted.length / seconds,
    seconds,
    count: sorted.length,
    p50: at(0.5),
    p95: at(0.95),
    p99: at(0.99),
    latencies: sorted,
  };
}

/** Rounds of one path as one measurement: their operations together, their times summed. */
export function combine(name: string, rounds: Array<{ latencies: number[]; seconds: number }>): Figures {
  return figures(
    name,
    rounds.flatMap((r) => r.latencies),
    rounds.reduce((sum, r) => sum + r.seconds, 0),
  );
}

/** Each round's own ratio (floor time ÷ ours) with equal work per round, to show the spread: `0.93, 1.04`. */
export const roundRatios = (ours: Array<{ seconds: number }>, floor: Array<{ seconds: number }>): string =>
  ours.map((o, i) => (floor[i]!.seconds / o.seconds).toFixed(2)).join(', ');

/**
 * Runs `op` `count` times with `concurrency` in flight after `warmup` untimed
 * calls (JIT, connection pools), and returns throughput and latencies.
 */
export async function measure(
  name: string,
  opts: { count: number; concurrency: number; warmup?: number },
  op: (i: number) => Promise<void>,
): Promise<Figures> {
  const warmup = opts.warmup ?? Math.min(20, opts.count);
  for (let i = 0; i < warmup; i++) await op(-1 - i);
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: opts.concurrency }, async () => {
      while (next < opts.count) {
        const i = next++;
        const t0 = performance.now();
        await op(i);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return figures(name, latencies, (performance.now() - started) / 1000);
}

/** A ratio the bench reports: bigger is better (floor time ÷ our time, or our throughput ÷ floor throughput). */
export interface Ratio {
  name: string;
  value: number;
  /** The target, or undefined when the issue only asks to print it. */
  target: number;
  ours: Figures;
  floor: Figures;
  /** What the figures compare (printed in the table). */
  basis: 'throughput' | 'median time' | 'total time';
  note?: string;
}

export function throughputRatio(name: string, target: number, ours: Figures, floor: Figures): Ratio {
  return { name, value: ours.ops / floor.ops, target, ours, floor, basis: 'throughput' };
}

export function medianRatio(name: string, target: number, ours: Figures, floor: Figures): Ratio {
  return { name, value: floor.p50 / ours.p50, target, ours, floor, basis: 'median time' };
}

export function totalTimeRatio(name: string, target: number, ours: Figures, floor: Figures): Ratio {
  return { name, value: floor.seconds / ours.seconds, target, ours, floor, basis: 'total time' };
}

const num = (v: number, digits: number, width: number) => v.toFixed(digits).padStart(width);

/** One row of the human table. */
export const row = (f: Figures): string =>
  `${f.name.padEnd(46)}${num(f.ops, 1, 10)}${num(f.p50, 1, 10)}${num(f.p95, 1, 10)}${num(f.seconds, 2, 10)}${String(f.count).padStart(7)}`;

/** The human table: each path beside its floor. */
export function table(ratios: Ratio[]): string {
  const lines = [
    `${'path'.padEnd(46)}${'ops/s'.padStart(10)}${'p50 ms'.padStart(10)}${'p95 ms'.padStart(10)}${'total s'.padStart(10)}${'n'.padStart(7)}`,
  ];
  for (const r of ratios) {
    lines.push(row(r.ours), row(r.floor));
    lines.push(
      `  → ${r.name}: ${r.value.toFixed(3)} by ${r.basis} (target ≥ ${r.target})${r.note ? `; ${r.note}` : ''}`,
    );
  }
  return lines.join('\n');
}

/** The machine-readable line, exactly `ratio <name> <value> target <target>`. */
export const ratioLine = (r: Ratio): string => `ratio ${r.name} ${r.value.toFixed(3)} target ${r.target}`;

/** `ratio pixel 0.512 target 0.5` → its parts; undefined when the line is not one. */
export function parseRatioLine(line: string): { name: string; value: number; target: number } | undefined {
  const m = /^ratio ([a-z_]+) (\d+(?:\.\d+)?) target (\d+(?:\.\d+)?)$/.exec(line);
  if (!m) return undefined;
  return { name: m[1]!, value: Number(m[2]), target: Number(m[3]) };
}
