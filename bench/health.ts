import type { BenchEnv } from './env.ts';
import { startFloor } from './lib/floors.ts';
import { httpRatio, type HttpSizes } from './lib/http-pair.ts';
import type { Ratio } from './lib/measure.ts';

/**
 * health (a reference, no target): `GET /health`, which does no I/O, against
 * a bare Node `http` server answering the same JSON: what the gateway's
 * request handling alone (middleware, router, logging, metrics) costs, the
 * most the pixel and the click could reach. 20 connections.
 */
export async function benchHealth(env: BenchEnv, sizes: HttpSizes): Promise<Ratio> {
  const connections = 20;
  const floor = await startFloor(env, 'health-floor', 'bench/floors/bare-http.ts', { FLOOR: 'health' });
  const load = (baseUrl: string) => () => ({
    baseUrl,
    method: 'GET' as const,
    paths: ['/health'],
    expectStatus: 200,
    connections,
  });
  const ratio = await httpRatio(
    env,
    { name: 'health', target: 0, reference: true },
    { ...sizes, services: {} },
    { name: 'floor: bare node:http JSON', pid: floor.pid, load: load(floor.url) },
    { name: `GET /health (${connections} conns)`, pid: env.gateway.pid, load: load(env.gatewayUrl) },
  );
  await floor.stop();
  return ratio;
}
