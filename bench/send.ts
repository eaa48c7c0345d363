import { randomUUID } from 'node:crypto';
import { renderEmail } from '../templates/engine.ts';
import { invoiceBody } from '../test/support/sample-emails.ts';
import { freePort } from '../infra/services.ts';
import type { BenchEnv } from './env.ts';
import { httpLoad } from './lib/http-load.ts';
import { combine, measure, roundRatios, throughputRatio, totalTimeRatio, type Ratio } from './lib/measure.ts';
import { waitForHttp } from './lib/processes.ts';
import { alternatingRounds } from './lib/rounds.ts';

/** The identity headers of one tenant (AUTH_MODE trusted-headers: a proxy vouches for them). */
export function tenantHeaders(): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-company-id': randomUUID(),
    'x-organization-id': randomUUID(),
    'x-user-id': randomUUID(),
  };
}

/**
 * send: `POST /api/email/send` (the invoice the tests send) through the
 * gateway, `concurrency` at once, against the floor server
 * (bench/floors/send-server.ts): insert, the same provider call, update.
 *
 * Both servers are first warmed with `warmup` requests (a long-running
 * server's steady state: JIT-compiled, pools filled; measured in rounds of
 * 200 after start, the gateway's CPU per send fell 12.7 → 9.3 → 5.4 ms and
 * the floor's 6.9 → 4.7 → 3.8 ms before levelling out),
 * then measured in `rounds` alternating rounds of `count / rounds` requests,
 * the times summed: on a shared machine one measurement of either moved by
 * ±20% from run to run.
 */
export async function benchSend(
  env: BenchEnv,
  opts: { count: number; concurrency: number; rounds: number; warmup: number },
): Promise<Ratio> {
  const body = invoiceBody();
  const headers = tenantHeaders();
  const rendered = renderEmail({
    templateId: 'invoice',
    data: body['template_data'] as Record<string, string>,
    subject: String(body['subject']),
    trackingPixelUrl: 'http://mailroom.bench/api/email/track?view_key=x',
  });
  const port = await freePort();
  const floorServer = await env.start('send-floor', 'bench/floors/send-server.ts', { PORT: String(port) });
  const floorUrl = `http://127.0.0.1:${port}`;
  await waitForHttp(floorServer, `${floorUrl}/`, 60_000).catch(() => undefined); // 404 is "up" too
  const floorBody = JSON.stringify({ to: 'customer@example.com', subject: body['subject'], ...rendered });
  const sendBody = JSON.stringify(body);
  const floorName = 'floor: bare Koa insert+provider+update';
  const oursName = `POST /api/email/send (${opts.concurrency} at once)`;
  const load = (count: number) => ({ count, connections: opts.concurrency, warmup: 0 });
  const floor = (name: string, count: number) =>
    httpLoad(name, floorUrl, load(count), () => ({
      method: 'POST',
      path: '/send',
      headers: { 'content-type': 'application/json' },
      body: floorBody,
    }));
  const ours = (name: string, count: number) =>
    httpLoad(name, env.gatewayUrl, load(count), () => ({
      method: 'POST',
      path: '/api/email/send',
      headers,
      body: sendBody,
    }));
  await floor('warm-up', opts.warmup);
  await ours('warm-up', opts.warmup);
  const perRound = Math.ceil(opts.count / opts.rounds);
  const rounds = await alternatingRounds(
    opts.rounds,
    [env.gateway.pid, floorServer.pid, env.servicePids.ferretdb],
    { floor: () => floor(floorName, perRound), ours: () => ours(oursName, perRound) },
  );
  await floorServer.stop(5000);
  const ratio = throughputRatio(
    'send',
    0.7,
    combine(oursName, rounds.ours),
    combine(floorName, rounds.floor),
  );
  ratio.note = `${opts.rounds} rounds after ${opts.warmup} warm-up requests each, by round ${roundRatios(rounds.ours, rounds.floor)}`;
  return ratio;
}

/**
 * bulk: one `POST /api/email/bulk` of `size` with `batchDelay: 0`, against
 * `size` single sends through the gateway all in parallel; `rounds` of each,
 * total time compared.
 */
export async function benchBulk(env: BenchEnv, opts: { size: number; rounds: number }): Promise<Ratio> {
  const headers = tenantHeaders();
  const item = invoiceBody();
  const single = JSON.stringify(item);
  const bulk = JSON.stringify({ emails: Array.from({ length: opts.size }, () => item), batchDelay: 0 });
  const post = async (path: string, payload: string) => {
    const res = await fetch(`${env.gatewayUrl}${path}`, { method: 'POST', headers, body: payload });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${text.slice(0, 300)}`);
    return text;
  };
  const floor = await measure(
    `floor: ${opts.size} single sends in parallel`,
    { count: opts.rounds, concurrency: 1, warmup: 1 },
    async () => {
      await Promise.all(Array.from({ length: opts.size }, () => post('/api/email/send', single)));
    },
  );
  const ours = await measure(
    `POST /api/email/bulk of ${opts.size}, batchDelay 0`,
    { count: opts.rounds, concurrency: 1, warmup: 1 },
    async () => {
      const answer = JSON.parse(await post('/api/email/bulk', bulk)) as { sent?: number };
      if (answer.sent !== opts.size) throw new Error(`bulk sent ${answer.sent} of ${opts.size}`);
    },
  );
  return totalTimeRatio('bulk', 0.8, ours, floor);
}
