import type { BenchEnv } from '../env.ts';
import { combineCpu, cores, type LoadResult, type LoadSpec } from './load.ts';
import { capacity, combine, throughputRatio, type Ratio } from './measure.ts';
import { cpuDuring, formatCores } from './processes.ts';
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
  /**
   * The services both sides use (the database, Temporal, the worker), by
   * name: idle before each measurement, and their CPU during each side's
   * measured rounds printed beside the ratio. On a shared machine their work
   * (an open's write, a webhook's delivery) takes cores the gateway could use,
   * which the floor, doing none, does not pay for.
   */
  services: Record<string, number | undefined>;
}

/** The HTTP paths' sizes (bench/run-once.ts): rounds, their length, the warm-up, and the pools of records. */
export interface HttpSizes extends Omit<HttpPairOptions, 'services'> {
  /** Records per pool: distinct emails per measurement of the pixel and the click; the status's records. */
  poolSize: number;
}

/**
 * An HTTP path and its floor, each loaded by the bench's generator: first an
 * unmeasured warm-up of each (JIT-compiled, pools filled: a long-running
 * server's steady state), then `rounds` alternating rounds (rounds.ts), the
 * throughputs compared over the summed rounds. The ratio carries both
 * sides' generator and server CPU (`load` lines, generator-bound or not),
 * and its note the services' CPU during each side's rounds.
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
  const load = (side: HttpSide, round: number, seconds: number) =>
    env.generator.run({ ...side.load(round), name: side.name, seconds, serverPid: side.pid });
  const warmUp = async (side: HttpSide) => side.after?.(await load(side, -1, opts.warmupSeconds), -1);
  /** Each side's services' cores, one entry per measured round. */
  const servicesCores = {
    floor: [] as Array<Record<string, number>>,
    ours: [] as Array<Record<string, number>>,
  };
  const measureRound = (which: 'floor' | 'ours', side: HttpSide) => async (round: number) => {
    const { result, cores: used } = await cpuDuring(opts.services, () => load(side, round, opts.seconds));
    servicesCores[which].push(used);
    await side.after?.(result, round);
    return result;
  };
  await warmUp(floor);
  await warmUp(ours);
  const rounds = await alternatingRounds(
    opts.rounds,
    [...Object.values(opts.services), floor.pid, ours.pid],
    {
      floor: measureRound('floor', floor),
      ours: measureRound('ours', ours),
    },
  );
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
  const servicesNote = describeServices(servicesCores);
  if (servicesNote) result.note += `; ${servicesNote}`;
  return result;
}

/** `CPU in cores during ours: FerretDB 0.62; during the floor: FerretDB 0.01` (the rounds' mean); '' without services. */
function describeServices(perRound: {
  floor: Array<Record<string, number>>;
  ours: Array<Record<string, number>>;
}) {
  const mean = (rounds: Array<Record<string, number>>) => {
    const sums: Record<string, number> = {};
    for (const round of rounds)
      for (const [name, c] of Object.entries(round)) sums[name] = (sums[name] ?? 0) + c;
    for (const name of Object.keys(sums)) sums[name] = sums[name]! / rounds.length;
    return sums;
  };
  const [ours, floor] = [mean(perRound.ours), mean(perRound.floor)];
  if (Object.keys(ours).length === 0) return '';
  return `CPU in cores during ours: ${formatCores(ours)}; during the floor: ${formatCores(floor)}`;
}
