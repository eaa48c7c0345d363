import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Generator, LoadResult, LoadSpec } from './load.ts';
import { figures } from './measure.ts';
import { cpuSeconds } from './processes.ts';

/**
 * The Node load generator, for machines without wrk: keep-alive `node:http`
 * connections in this process (node:http rather than fetch: less CPU per
 * request). It costs ≈ 120–150 µs of CPU per request when warm, so against
 * a bare server it is the limit (the bench says so: generator-bound). Its
 * CPU is this process's, which also runs the fake SendGrid (the send path's
 * provider calls count as generator CPU here).
 */
export function nodeGenerator(why: string): Generator {
  return {
    kind: 'node',
    why,
    async run(spec: LoadSpec) {
      const url = new URL(spec.baseUrl);
      const agent = new Agent({ keepAlive: true, maxSockets: spec.connections });
      const body = spec.body === undefined ? undefined : Buffer.from(spec.body);
      const headers = { ...spec.headers, ...(body ? { 'content-length': String(body.length) } : {}) };
      const once = (path: string) =>
        new Promise<void>((resolve, reject) => {
          const r = request(
            { agent, host: url.hostname, port: url.port, method: spec.method, path, headers },
            (res) => {
              const chunks: Buffer[] = [];
              res.on('data', (c: Buffer) => chunks.push(c));
              res.on('end', () => {
                if (res.statusCode !== spec.expectStatus)
                  reject(
                    new Error(
                      `${spec.name}: ${spec.method} ${path} answered ${res.statusCode}: ${Buffer.concat(chunks).toString('utf8').slice(0, 300)}`,
                    ),
                  );
                else resolve();
              });
              res.on('error', reject);
            },
          );
          r.on('error', reject);
          r.end(body);
        });
      try {
        let next = 0;
        return await closedLoop(spec, () => once(spec.paths[next++ % spec.paths.length]!));
      } finally {
        agent.destroy();
      }
    },
  };
}

/**
 * A closed-loop load in this process: `connections` loops, each starting the
 * next request as soon as the previous one settled, for `seconds`; the
 * latencies, and the CPU this process and the server used meanwhile.
 */
export async function closedLoop(
  spec: { name: string; connections: number; seconds: number; serverPid: number },
  requestOnce: () => Promise<void>,
): Promise<LoadResult> {
  const latencies: number[] = [];
  const cpuBefore = process.cpuUsage();
  const serverBefore = await cpuSeconds(spec.serverPid);
  const started = performance.now();
  const deadline = started + spec.seconds * 1000;
  await Promise.all(
    Array.from({ length: spec.connections }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        await requestOnce();
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const wall = (performance.now() - started) / 1000;
  const serverAfter = await cpuSeconds(spec.serverPid);
  const cpu = process.cpuUsage(cpuBefore);
  return {
    figures: figures(spec.name, latencies, wall),
    cpu: {
      generator: 'node',
      generatorCpu: (cpu.user + cpu.system) / 1e6,
      serverCpu: (serverAfter ?? 0) - (serverBefore ?? 0),
      wall,
    },
    answered: latencies.length,
  };
}
