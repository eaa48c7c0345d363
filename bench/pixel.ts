import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { BenchEnv } from './env.ts';
import { httpLoad } from './lib/http-load.ts';
import type { EmailRecord } from '../core/email/record.ts';
import { invoiceRecord } from './lib/records.ts';
import { throughputRatio, type Ratio } from './lib/measure.ts';
import { waitForHttp } from './lib/processes.ts';
import { freePort } from '../infra/services.ts';

/**
 * pixel: `GET /api/email/track` on distinct view keys (one per request, each
 * a real sent email), `connections` at once, against a bare Node `http`
 * server answering the same GIF. Afterwards every one of those opens must be
 * in the database (the bench reads the records back; a pixel that answers
 * fast by dropping opens fails the run).
 */
export async function benchPixel(
  env: BenchEnv,
  opts: { count: number; connections: number },
): Promise<Ratio> {
  const warmup = Math.min(50, opts.count);
  const records = Array.from({ length: opts.count + warmup }, () =>
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
  const keyOf = (i: number) => records[i < 0 ? opts.count - 1 - i : i]!.view_key;

  const port = await freePort();
  const floorServer = await env.start('pixel-floor', 'bench/floors/pixel-server.ts', { PORT: String(port) });
  const floorUrl = `http://127.0.0.1:${port}`;
  await waitForHttp(floorServer, `${floorUrl}/`);
  const path = (i: number) => `/api/email/track?view_key=${encodeURIComponent(keyOf(i))}`;
  const load = { count: opts.count, connections: opts.connections, warmup };
  const floor = await httpLoad('floor: bare node:http GIF', floorUrl, load, (i) => ({
    method: 'GET',
    path: path(i),
  }));
  await floorServer.stop(5000);
  const ours = await httpLoad(
    `GET /api/email/track (${opts.connections} conns)`,
    env.gatewayUrl,
    load,
    (i) => ({
      method: 'GET',
      path: path(i),
    }),
  );

  // Every open recorded by the end of the run: the buffer answers at once and
  // writes behind; how long the database takes to catch up is reported beside.
  const ids = records.map((r) => r._id);
  const drainStarted = performance.now();
  const deadline = Date.now() + Math.max(60_000, ids.length * 200);
  const countOpened = () => emails.countDocuments({ _id: { $in: ids }, opened: true });
  let opened = await countOpened();
  while (opened !== ids.length && Date.now() < deadline) {
    // Not too often: on FerretDB this count scans, and competes with the writes it waits for.
    await new Promise((r) => setTimeout(r, 2000));
    opened = await countOpened();
  }
  if (opened !== ids.length)
    throw new Error(`pixel: ${ids.length - opened} of ${ids.length} opens were not recorded in time`);
  const drainSeconds = (performance.now() - drainStarted) / 1000;
  const writeRate = ids.length / (ours.seconds + drainSeconds);
  return {
    ...throughputRatio('pixel', 0.5, ours, floor),
    note: `all ${ids.length} opens recorded, ${drainSeconds.toFixed(1)} s after the last answer (${writeRate.toFixed(0)} opens/s written)`,
  };
}
