import type { BenchEnv } from './env.ts';
import { httpRatio, type HttpSizes } from './lib/http-pair.ts';
import type { Ratio } from './lib/measure.ts';
import { recordedAfterEachMeasurement, seedPools } from './lib/opens.ts';
import { startFloor } from './lib/floors.ts';

/**
 * pixel: `GET /api/email/track` on view keys of real sent emails, 20
 * connections, against a bare Node `http` server answering the same GIF
 * (bench/floors/bare-http.ts), both loaded by the bench's generator. Each of
 * our measurements opens a pool of emails nobody opened before, and every
 * open must be in the database before the next one (lib/opens.ts).
 *
 * The warm-up is long because JIT compilation of a request path this short
 * takes thousands of requests: measured in rounds of 1,000 after start, the
 * gateway's CPU per pixel fell 600 → 530 → 350 → 230 → 130 µs, the floor's
 * 240 → 260 → 150 → 80 → 80 µs.
 */
export async function benchPixel(env: BenchEnv, sizes: HttpSizes): Promise<Ratio> {
  const connections = 20;
  const pools = await seedPools(env, sizes.rounds + 1, sizes.poolSize);
  const paths = pools.map((pool) =>
    pool.map((r) => `/api/email/track?view_key=${encodeURIComponent(r.view_key)}`),
  );
  const floor = await startFloor(env, 'pixel-floor', 'bench/floors/bare-http.ts', { FLOOR: 'pixel' });
  const recorded = recordedAfterEachMeasurement(env.database.db, pools, 'opened', connections);
  // The floor answers any path: it is asked the same ones.
  const load = (baseUrl: string) => (round: number) => ({
    baseUrl,
    method: 'GET' as const,
    paths: paths[round + 1]!,
    expectStatus: 200,
    connections,
  });
  const ratio = await httpRatio(
    env,
    { name: 'pixel', target: 0.5, unit: 'opens' },
    { ...sizes, services: { FerretDB: env.servicePids.ferretdb } },
    { name: 'floor: bare node:http GIF', pid: floor.pid, load: load(floor.url) },
    {
      name: `GET /api/email/track (${connections} conns)`,
      pid: env.gateway.pid,
      load: load(env.gatewayUrl),
      after: recorded.after,
    },
  );
  await floor.stop();
  const { records, drainSeconds } = recorded.totals;
  ratio.note += `; all ${records} opens checked in the database, ${drainSeconds.toFixed(1)} s in all after the measurements' last answers`;
  return ratio;
}
