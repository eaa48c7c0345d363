/**
 * An HTTP load: `connections` keep-alive connections, each sending its next
 * request as soon as the previous answer is read, for `seconds`. Every
 * request is `method` with the same headers and body; the path is the next
 * of `paths` (in order, starting over after the last). Any answer other than
 * `expectStatus` fails the measurement.
 */
export interface LoadSpec {
  /** The row's name in the table. */
  name: string;
  baseUrl: string;
  method: 'GET' | 'POST';
  paths: readonly string[];
  headers?: Record<string, string>;
  body?: string;
  expectStatus: number;
  connections: number;
  seconds: number;
  /** The process answering (gateway or floor): its CPU is measured beside the generator's. */
  serverPid: number;
}

export type GeneratorKind = 'wrk' | 'node';

/** CPU seconds of the generator and of the server over `wall` seconds of load. */
export interface LoadCpu {
  generator: GeneratorKind;
  generatorCpu: number;
  serverCpu: number;
  wall: number;
}

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

export interface LoadResult {
  figures: Figures;
  cpu: LoadCpu;
  /** Requests answered (the first `answered` of `paths`, in order, were each asked at least once). */
  answered: number;
}

export interface Generator {
  kind: GeneratorKind;
  /** Why this generator (printed once at the start of a run). */
  why: string;
  run(spec: LoadSpec): Promise<LoadResult>;
}

/** A single-threaded generator using this much of a core or more is the limit, whatever the server does. */
export const GENERATOR_SATURATED_CORES = 0.9;

export const cores = (cpu: LoadCpu) => ({
  generator: cpu.generatorCpu / cpu.wall,
  server: cpu.serverCpu / cpu.wall,
});

/**
 * The generator is the bottleneck of a measurement when it used as much CPU
 * as the server it loaded, or close to its one core: the figure is then what
 * the generator could ask, not what the server could answer.
 */
export function generatorBound(cpu: LoadCpu): boolean {
  const c = cores(cpu);
  return c.generator >= c.server || c.generator >= GENERATOR_SATURATED_CORES;
}

/** Rounds of one side as one: CPU and wall time summed. */
export function combineCpu(rounds: readonly LoadCpu[]): LoadCpu {
  return {
    generator: rounds[0]!.generator,
    generatorCpu: rounds.reduce((s, r) => s + r.generatorCpu, 0),
    serverCpu: rounds.reduce((s, r) => s + r.serverCpu, 0),
    wall: rounds.reduce((s, r) => s + r.wall, 0),
  };
}
