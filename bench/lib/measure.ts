import { performance } from 'node:perf_hooks';
import { cores, generatorBound, type Figures, type LoadCpu } from './load.ts';

export type { Figures } from './load.ts';

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
  target: number;
  /** A figure for comparison with no target (`health`): printed as `reference <name> <value>`. */
  reference?: boolean;
  ours: Figures;
  floor: Figures;
  /** What the figures compare (printed in the table). */
  basis: 'throughput' | 'median time' | 'total time';
  note?: string;
  /** HTTP paths: the CPU of the load generator and of the server, each side. */
  load?: { ours: LoadCpu; floor: LoadCpu };
  /** Our side's work per core of the processes that did it (`capacity` lines). */
  capacity?: Capacity[];
}

/**
 * Work per core: what one process did in the measured rounds ÷ the CPU
 * seconds it used for it (= operations per second ÷ cores used), the figure
 * a sizing estimate multiplies by cores. Printed exactly
 * `capacity <name> <value> <unit>`.
 */
export interface Capacity {
  name: string;
  value: number;
  /** What per what: `emails/s per gateway core`. */
  unit: string;
}

/** Operations per CPU second of a process that used `cores` for `ops` per second; undefined without a CPU figure. */
export function capacity(name: string, ops: number, cores: number | undefined, unit: string): Capacity[] {
  return cores === undefined || !(cores > 0) ? [] : [{ name, value: ops / cores, unit }];
}

export const capacityLine = (c: Capacity): string => `capacity ${c.name} ${c.value.toFixed(1)} ${c.unit}`;

/** `capacity send 120.5 emails/s per gateway core` → its parts; undefined when the line is not one. */
export function parseCapacityLine(line: string): Capacity | undefined {
  const m = /^capacity ([a-z_]+) (\d+\.\d) (\S+\/s per [A-Za-z]+ core)$/.exec(line);
  if (!m) return undefined;
  return { name: m[1]!, value: Number(m[2]), unit: m[3]! };
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

/** `wrk 0.31 / 0.98`: the generator's cores and the server's during the measurement. */
const loadCell = (cpu: LoadCpu | undefined): string => {
  if (!cpu) return '';
  const c = cores(cpu);
  return `  ${cpu.generator} ${c.generator.toFixed(2)} / ${c.server.toFixed(2)}${generatorBound(cpu) ? ' generator-bound' : ''}`;
};

/** One row of the human table (HTTP paths: the generator's CPU beside the server's, in cores). */
export const row = (f: Figures, cpu?: LoadCpu): string =>
  `${f.name.padEnd(46)}${num(f.ops, 1, 10)}${num(f.p50, 1, 10)}${num(f.p95, 1, 10)}${num(f.seconds, 2, 10)}${String(f.count).padStart(7)}${loadCell(cpu)}`;

/** The human table: each path beside its floor. */
export function table(ratios: Ratio[]): string {
  const lines = [
    `${'path'.padEnd(46)}${'ops/s'.padStart(10)}${'p50 ms'.padStart(10)}${'p95 ms'.padStart(10)}${'total s'.padStart(10)}${'n'.padStart(7)}  generator / server cores`,
  ];
  for (const r of ratios) {
    lines.push(row(r.ours, r.load?.ours), row(r.floor, r.load?.floor));
    const target = r.reference ? 'reference, no target' : `target ≥ ${r.target}`;
    lines.push(
      `  → ${r.name}: ${r.value.toFixed(3)} by ${r.basis} (${target})${r.note ? `; ${r.note}` : ''}`,
    );
    const bound = r.load && generatorBoundNote(r.load);
    if (bound) lines.push(`    ${bound}`);
  }
  return lines.join('\n');
}

/** What a generator-bound side means for the ratio; undefined when neither side is. */
function generatorBoundNote(load: { ours: LoadCpu; floor: LoadCpu }): string | undefined {
  const floor = generatorBound(load.floor);
  const ours = generatorBound(load.ours);
  if (floor && ours)
    return 'both sides generator-bound: each figure is what the generator could ask, the ratio says nothing';
  if (floor)
    return `the floor is generator-bound (${load.floor.generator} used as much CPU as the floor, or nearly a core): the floor's figure is a lower bound, the ratio an upper bound`;
  if (ours)
    return `ours is generator-bound (${load.ours.generator} used as much CPU as the gateway, or nearly a core): the ratio is a lower bound`;
  return undefined;
}

/** The machine-readable line: exactly `ratio <name> <value> target <target>` (`reference <name> <value>` for a reference). */
export const ratioLine = (r: Ratio): string =>
  r.reference
    ? `reference ${r.name} ${r.value.toFixed(3)}`
    : `ratio ${r.name} ${r.value.toFixed(3)} target ${r.target}`;

/**
 * HTTP paths, one line per side, exactly
 * `load <name> <floor|ours> <wrk|node> <generator cores> server <server cores> <ok|generator-bound>`:
 * the load generator's CPU beside the server's over the measured rounds, in
 * cores to three decimals (wrk loading a database-bound path uses a few
 * thousandths of a core: two decimals printed 0.00).
 */
export function loadLines(r: Ratio): string[] {
  const load = r.load;
  if (!load) return [];
  return (['floor', 'ours'] as const).map((side) => {
    const cpu = load[side];
    const c = cores(cpu);
    return `load ${r.name} ${side} ${cpu.generator} ${c.generator.toFixed(3)} server ${c.server.toFixed(3)} ${generatorBound(cpu) ? 'generator-bound' : 'ok'}`;
  });
}

/** `load pixel floor wrk 0.31 server 0.98 ok` → its parts; undefined when the line is not one. */
export function parseLoadLine(line: string):
  | {
      name: string;
      side: 'floor' | 'ours';
      generator: 'wrk' | 'node';
      generatorCores: number;
      serverCores: number;
      bound: boolean;
    }
  | undefined {
  const m = /^load ([a-z_]+) (floor|ours) (wrk|node) (\d+\.\d+) server (\d+\.\d+) (ok|generator-bound)$/.exec(
    line,
  );
  if (!m) return undefined;
  return {
    name: m[1]!,
    side: m[2] as 'floor' | 'ours',
    generator: m[3] as 'wrk' | 'node',
    generatorCores: Number(m[4]),
    serverCores: Number(m[5]),
    bound: m[6] === 'generator-bound',
  };
}

/** `ratio pixel 0.512 target 0.5` → its parts; undefined when the line is not one. */
export function parseRatioLine(line: string): { name: string; value: number; target: number } | undefined {
  const m = /^ratio ([a-z_]+) (\d+(?:\.\d+)?) target (\d+(?:\.\d+)?)$/.exec(line);
  if (!m) return undefined;
  return { name: m[1]!, value: Number(m[2]), target: Number(m[3]) };
}
