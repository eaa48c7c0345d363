import { clickTokens } from '../core/email/tracking/click-token.ts';
import type { BenchEnv } from './env.ts';
import { startFloor } from './lib/floors.ts';
import { httpRatio, type HttpSizes } from './lib/http-pair.ts';
import type { Ratio } from './lib/measure.ts';
import { recordedAfterEachMeasurement, seedPools } from './lib/opens.ts';

/** Where the bench's tracked links lead: nothing in it that Koa's redirect body would escape (the floor's is fixed). */
const LINK = 'https://example.com/invoices/INV-1';

/**
 * click: `GET /api/email/click/{token}` on tokens of real sent emails
 * (signed with the gateway's MAILROOM_SECRET, as a send would have written
 * them into the email), 20 connections, against a bare Node `http` server
 * answering the same 302 (bench/floors/bare-http.ts). Like the pixel, each
 * of our measurements clicks a pool of emails nobody clicked before, and
 * every click must be in the database before the next one.
 */
export async function benchClick(env: BenchEnv, sizes: HttpSizes): Promise<Ratio> {
  const connections = 20;
  const tokens = clickTokens(env.serviceEnv['MAILROOM_SECRET']!);
  const pools = await seedPools(env, sizes.rounds + 1, sizes.poolSize);
  const paths = pools.map((pool) => pool.map((r) => `/api/email/click/${tokens.sign(r._id, LINK)!}`));
  const floor = await startFloor(env, 'click-floor', 'bench/floors/bare-http.ts', {
    FLOOR: 'click',
    CLICK_URL: LINK,
  });
  const recorded = recordedAfterEachMeasurement(env.database.db, pools, 'clicked', connections);
  const load = (baseUrl: string) => (round: number) => ({
    baseUrl,
    method: 'GET' as const,
    paths: paths[round + 1]!,
    expectStatus: 302,
    connections,
  });
  const ratio = await httpRatio(
    env,
    { name: 'click', target: 0.5, unit: 'clicks' },
    { ...sizes, services: { FerretDB: env.servicePids.ferretdb } },
    { name: 'floor: bare node:http 302', pid: floor.pid, load: load(floor.url) },
    {
      name: `GET /api/email/click/{token} (${connections} conns)`,
      pid: env.gateway.pid,
      load: load(env.gatewayUrl),
      after: recorded.after,
    },
  );
  await floor.stop();
  const { records, drainSeconds } = recorded.totals;
  ratio.note += `; all ${records} clicks checked in the database, ${drainSeconds.toFixed(1)} s in all after the measurements' last answers`;
  return ratio;
}
