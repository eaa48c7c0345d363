import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Generator, LoadSpec } from './load.ts';
import { figures, type Figures } from './measure.ts';
import { cpuSeconds, ROOT } from './processes.ts';

export const WRK_SCRIPT = join(ROOT, 'bench/wrk/requests.lua');

/** What bench/wrk/requests.lua prints at the end. */
interface WrkSummary {
  requests: number;
  duration_us: number;
  connect: number;
  read: number;
  write: number;
  status: number;
  timeout: number;
  latency_us: number[];
  cpu_us: number;
}

/**
 * `wrk` as the bench's load generator: one thread (a C event loop: ≈ 20 µs
 * of CPU per request on the bench's 2-core VM, where the Node client spent
 * 120–150 µs), the request and the paths handed to bench/wrk/requests.lua in
 * files under `scratch`. wrk runs for whole seconds; the figures are its own (answers,
 * its duration, its latency percentiles).
 *
 * wrk's CPU is what it reports itself at the end (`os.clock()` in its Lua
 * script: the whole process, to the microsecond). Counting it from this
 * process's `cutime` was exact only to a clock tick (10 ms), which is all
 * that a slow path's wrk uses in a short round: the bench printed 0.00.
 */
export function wrkGenerator(wrkPath: string, scratch: string, why: string): Generator {
  return {
    kind: 'wrk',
    why,
    async run(spec: LoadSpec) {
      const id = randomUUID().slice(0, 8);
      const specFile = join(scratch, `wrk-${id}.request`);
      const pathsFile = join(scratch, `wrk-${id}.paths`);
      const head = [
        `${spec.method} ${spec.paths[0]}`,
        ...Object.entries(spec.headers ?? {}).map(([k, v]) => `${k}: ${v}`),
      ];
      await writeFile(specFile, `${head.join('\n')}\n\n${spec.body ?? ''}`);
      const manyPaths = spec.paths.length > 1;
      if (manyPaths) await writeFile(pathsFile, `${spec.paths.join('\n')}\n`);
      try {
        // wrk counts only answers of 400 and above as errors: the exact status is checked on one request first.
        const preflight = await firstAnswer(spec);
        if (!preflight.startsWith(`${spec.expectStatus} `))
          throw new Error(
            `${spec.name}: expected ${spec.expectStatus}, the first request answered ${preflight}`,
          );
        const serverBefore = await cpuSeconds(spec.serverPid);
        const t0 = performance.now();
        const output = await runWrk(
          wrkPath,
          [
            '-t1',
            `-c${spec.connections}`,
            `-d${Math.max(1, Math.round(spec.seconds))}s`,
            '--timeout',
            '30s',
            '-s',
            WRK_SCRIPT,
            spec.baseUrl,
          ],
          { BENCH_WRK_SPEC: specFile, BENCH_WRK_PATHS: manyPaths ? pathsFile : '' },
        );
        const wall = (performance.now() - t0) / 1000;
        const serverAfter = await cpuSeconds(spec.serverPid);
        const summary = parseSummary(output);
        const errors = summary.connect + summary.read + summary.write + summary.status + summary.timeout;
        if (errors > 0 || summary.requests === 0)
          throw new Error(
            `${spec.name}: wrk saw ${summary.requests} answers and errors ${JSON.stringify({ connect: summary.connect, read: summary.read, write: summary.write, status: summary.status, timeout: summary.timeout })}; first request answered: ${await firstAnswer(spec)}`,
          );
        const seconds = summary.duration_us / 1e6;
        return {
          figures: figuresFromPercentiles(
            spec.name,
            summary.latency_us.map((us) => us / 1000),
            summary.requests,
            seconds,
          ),
          cpu: {
            generator: 'wrk',
            generatorCpu: summary.cpu_us / 1e6,
            serverCpu: (serverAfter ?? 0) - (serverBefore ?? 0),
            wall,
          },
          answered: summary.requests,
        };
      } finally {
        await rm(specFile, { force: true });
        await rm(pathsFile, { force: true });
      }
    },
  };
}

function runWrk(wrkPath: string, args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(wrkPath, args, {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => {
      if (code === 0) resolve(out);
      else reject(new Error(`wrk exited with ${code}: ${(err || out).trim().slice(-1000)}`));
    });
  });
}

function parseSummary(output: string): WrkSummary {
  const line = output.split('\n').find((l) => l.startsWith('BENCH_WRK '));
  if (!line) throw new Error(`wrk printed no BENCH_WRK line:\n${output.slice(-1500)}`);
  return JSON.parse(line.slice('BENCH_WRK '.length)) as WrkSummary;
}

/** When wrk saw errors: what the first request gets, to say why. */
async function firstAnswer(spec: LoadSpec): Promise<string> {
  try {
    const res = await fetch(new URL(spec.paths[0]!, spec.baseUrl), {
      method: spec.method,
      headers: spec.headers,
      body: spec.body,
      redirect: 'manual',
    });
    return `${res.status} ${(await res.text()).slice(0, 300)}`;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/**
 * Figures from latency percentiles (1st … 100th, milliseconds), for `count`
 * requests over `seconds`: the per-request latencies are rebuilt from the
 * percentiles, so rounds combine like the Node generator's exact ones.
 */
function figuresFromPercentiles(
  name: string,
  percentiles: readonly number[],
  count: number,
  seconds: number,
): Figures {
  const latencies = Array.from({ length: count }, (_, k) => {
    const p = Math.min(percentiles.length - 1, Math.floor(((k + 0.5) / count) * percentiles.length));
    return percentiles[p] ?? 0;
  });
  return figures(name, latencies, seconds);
}
