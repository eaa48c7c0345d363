import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { BenchEnv } from './env.ts';
import { httpLoad } from './lib/http-load.ts';
import type { EmailRecord } from '../core/email/record.ts';
import { invoiceRecord } from './lib/records.ts';
import { combine, roundRatios, throughputRatio, type Ratio } from './lib/measure.ts';
import { alternatingRounds } from './lib/rounds.ts';
import { waitForHttp } from './lib/processes.ts';
import { freePort } from '../infra/services.ts';

/**
 * pixel: `GET /api/email/track` on distinct view keys (one per request, each
 * a real sent email), `connections` at once, against a bare Node `http`
 * server answering the same GIF. Afterwards every one of those opens must be
 * in the database (the bench reads the records back; a pixel that answers
 * fast by dropping opens fails the run).
 *
 * As for send (bench/send.ts): both warmed with `warmup` requests, then
 * `rounds` alternating rounds of `count / rounds` requests, times summed (one
 * round of 1,000 takes well under a second, and moved by ±25% between runs).
 * The warm-up is long because JIT compilation of a request path this short
 * takes thousands of requests: measured in rounds of 1,000 after start, the
 * gateway's CPU per pixel fell 600 → 530 → 350 → 230 → 130 µs, the floor's
 * 240 → 260 → 150 → 80 → 80 µs. Past that the load generator (this process,
 * ≈ 120–150 µs per request) bounds the floor.
 */
export async function benchPixel(
  env: BenchEnv,
  opts: { count: number; connections: number; rounds: number; warmup: number },
): Promise<Ratio> {
  const perRound = Math.ceil(opts.count / opts.rounds);
  const total = opts.warmup + perRound * opts.rounds;
  const records = Array.from({ length: total }, () =>
    invoiceRecord({
      emailId: randomUUID(),
      to: 'customer@example.com',
      subject: 'Invoice INV-1',
      status: 'sent',
      providerId: 'bench',
    }),
  );
  const emails = env.database.db.collection<EmailRecord>('emails');
  for (let i = 0; i < records.length; i += 1000) await emails.insertMany(records.slice(i, i + 1000));

  const port = await freePort();
  const floorServer = await env.start('pixel-floor', 'bench/floors/pixel-server.ts', { PORT: String(port) });
  const floorUrl = `http://127.0.0.1:${port}`;
  await waitForHttp(floorServer, `${floorUrl}/`);
  // Each key is opened once through the gateway; the floor answers the same paths.
  const pathOf = (n: number) => `/api/email/track?view_key=${encodeURIComponent(records[n]!.view_key)}`;
  const load = (name: string, url: string, count: number, from: number) =>
    httpLoad(name, url, { count, connections: opts.connections, warmup: 0 }, (i) => ({
      method: 'GET',
      path: pathOf(from + i),
    }));

  // Every open recorded: the buffer answers at once and writes behind. After
  // each of our rounds the bench waits until the database has them all, so
  // no measurement shares the machine with the previous round's writes; how
  // long that took is reported beside.
  let drainSeconds = 0;
  const countOpened = (ids: string[]) => emails.countDocuments({ _id: { $in: ids }, opened: true });
  const recorded = async (from: number, count: number) => {
    const ids = records.slice(from, from + count).map((r) => r._id);
    const started = performance.now();
    const deadline = Date.now() + Math.max(60_000, ids.length * 200);
    let opened = await countOpened(ids);
    while (opened !== ids.length && Date.now() < deadline) {
      // Not too often: on FerretDB this count scans, and competes with the writes it waits for.
      await new Promise((r) => setTimeout(r, 500));
      opened = await countOpened(ids);
    }
    if (opened !== ids.length)
      throw new Error(`pixel: ${ids.length - opened} of ${ids.length} opens were not recorded in time`);
    drainSeconds += (performance.now() - started) / 1000;
  };
  const floorName = 'floor: bare node:http GIF';
  const oursName = `GET /api/email/track (${opts.connections} conns)`;
  await load('warm-up', floorUrl, opts.warmup, 0);
  await load('warm-up', env.gatewayUrl, opts.warmup, 0);
  await recorded(0, opts.warmup);
  const rounds = await alternatingRounds(
    opts.rounds,
    [env.gateway.pid, floorServer.pid, env.servicePids.ferretdb],
    {
      floor: (round) => load(floorName, floorUrl, perRound, opts.warmup + round * perRound),
      ours: async (round) => {
        const from = opts.warmup + round * perRound;
        const figures = await load(oursName, env.gatewayUrl, perRound, from);
        await recorded(from, perRound);
        return figures;
      },
    },
  );
  await floorServer.stop(5000);
  const floor = combine(floorName, rounds.floor);
  const measured = combine(oursName, rounds.ours);
  const writeRate = total / (measured.seconds + drainSeconds);
  return {
    ...throughputRatio('pixel', 0.5, measured, floor),
    note:
      `${opts.rounds} rounds after ${opts.warmup} warm-up requests each, by round ${roundRatios(rounds.ours, rounds.floor)}; ` +
      `all ${total} opens recorded, ${drainSeconds.toFixed(1)} s in all after the rounds' last answers (${writeRate.toFixed(0)} opens/s written)`,
  };
}
