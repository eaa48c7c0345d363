import type { BenchEnv } from '../env.ts';
import { combineCpu, cores, type LoadResult, type LoadSpec } from './load.ts';
import { capacity, combine, throughputRatio, type Ratio } from './measure.ts';
import { alternatingRounds } from './rounds.ts';

/** One side of an HTTP ratio: where it is served, and what each measurement asks. */
export interface HttpSide {
  /** The row's name in the table. */
  name: string;
  /** The process answering. */
  pid: number;
  /** The load of round `round` (-1: the warm-up). */
  load(round: number): Omit<LoadSpec, 'name' | 'seconds' | 'serverPid'>;
  /** After each of this side's measurements (the warm-up too): e.g. wait until its writes are done. */
  after?(result: LoadResult, round: number): Promise<void>;
}

export interface HttpPairOptions {
  rounds: number;
  /** Each round's length per side (whole seconds: wrk's unit). */
  seconds: number;
  /** The unmeasured warm-up of each side first. */
  warmupSeconds: number;
  /** Processes that must be idle before each measurement (besides both sides' own). */
  idle: Array<number | undefined>;
}

/** The HTTP paths' sizes (bench/run-once.ts): rounds, their length, the warm-up, and the pools of records. */
export interface HttpSizes extends Omit<HttpPairOptions, 'idle'> {
  /** Records per pool: distinct emails per measurement of the pixel and the click; the status's records. */
  poolSize: number;
}

/**
 * An HTTP path and its floor, each loaded by the bench's generator: first an
 * unmeasured warm-up of each (JIT-compiled, pools filled: a long-running
 * server's steady state), then `rounds` alternating rounds (rounds.ts), the
 * throughputs compared over the summed rounds. The ratio carries both
 * sides' generator and server CPU (`load` lines, generator-bound or not).
 */
export async function httpRatio(
  env: BenchEnv,
  ratio: {
    name: string;
    target: number;
    reference?: boolean;
    /** What one of our requests is, for its `capacity` line (`emails` → `emails/s per gateway core`). */
    unit?: string;
  },
  opts: HttpPairOptions,
  floor: HttpSide,
  ours: HttpSide,
): Promise<Ratio> {
  const measureSide = async (side: HttpSide, round: number, seconds: number) => {
    const result = await env.generator.run({
      ...side.load(round),
      name: side.name,
      seconds,
      serverPid: side.pid,
    });
    await side.after?.(result, round);
    return result;
  };
  await measureSide(floor, -1, opts.warmupSeconds);
  await measureSide(ours, -1, opts.warmupSeconds);
  const rounds = await alternatingRounds(opts.rounds, [...opts.idle, floor.pid, ours.pid], {
    floor: (round) => measureSide(floor, round, opts.seconds),
    ours: (round) => measureSide(ours, round, opts.seconds),
  });
  const figuresOf = (name: string, results: LoadResult[]) =>
    combine(
      name,
      results.map((r) => r.figures),
    );
  const result = throughputRatio(
    ratio.name,
    ratio.target,
    figuresOf(ours.name, rounds.ours),
    figuresOf(floor.name, rounds.floor),
  );
  result.load = {
    ours: combineCpu(rounds.ours.map((r) => r.cpu)),
    floor: combineCpu(rounds.floor.map((r) => r.cpu)),
  };
  if (ratio.reference) result.reference = true;
  if (ratio.unit)
    result.capacity = capacity(
      ratio.name,
      result.ours.ops,
      cores(result.load.ours).server,
      `${ratio.unit}/s per gateway core`,
    );
  const byRound = rounds.ours.map((o, i) => (o.figures.ops / rounds.floor[i]!.figures.ops).toFixed(2));
  result.note = `${opts.rounds} round${opts.rounds === 1 ? '' : 's'} of ${opts.seconds} s after ${opts.warmupSeconds} s of warm-up each, by round ${byRound.join(', ')}`;
  return result;
}
