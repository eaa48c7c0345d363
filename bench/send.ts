import { randomUUID } from 'node:crypto';
import { renderEmail } from '../templates/engine.ts';
import { invoiceBody } from '../test/support/sample-emails.ts';
import type { BenchEnv } from './env.ts';
import { startFloor } from './lib/floors.ts';
import { httpRatio, type HttpPairOptions } from './lib/http-pair.ts';
import { capacity, measure, totalTimeRatio, type Ratio } from './lib/measure.ts';
import { cpuDuring } from './lib/processes.ts';

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
 * gateway, 10 connections, against the floor server
 * (bench/floors/send-server.ts): insert, the same provider call, update.
 * Both loaded by the bench's generator, warmed first (measured in rounds of
 * 200 after start, the gateway's CPU per send fell 12.7 → 9.3 → 5.4 ms and
 * the floor's 6.9 → 4.7 → 3.8 ms before levelling out), then alternating
 * rounds (lib/http-pair.ts).
 */
export async function benchSend(
  env: BenchEnv,
  sizes: Omit<HttpPairOptions, 'services'>,
  /** Another name and tenant for the same measurement (bench/webhooks.ts: with an endpoint subscribed). */
  as: { name: string; headers: Record<string, string> } = { name: 'send', headers: tenantHeaders() },
): Promise<Ratio> {
  const connections = 10;
  const body = invoiceBody();
  const rendered = renderEmail({
    templateId: 'invoice',
    data: body['template_data'] as Record<string, string>,
    subject: String(body['subject']),
    trackingPixelUrl: 'http://mailroom.bench/api/email/track?view_key=x',
  });
  const { headers } = as;
  const floor = await startFloor(env, 'send-floor', 'bench/floors/send-server.ts');
  const json = { 'content-type': 'application/json' };
  const ratio = await httpRatio(
    env,
    { name: as.name, target: 0.8, unit: 'emails' },
    { ...sizes, services: sendServices(env) },
    {
      name: 'floor: bare Koa insert+provider+update',
      pid: floor.pid,
      load: () => ({
        baseUrl: floor.url,
        method: 'POST',
        paths: ['/send'],
        headers: json,
        body: JSON.stringify({ to: 'customer@example.com', subject: body['subject'], ...rendered }),
        expectStatus: 200,
        connections,
      }),
    },
    {
      name: `POST /api/email/send (${connections} conns)`,
      pid: env.gateway.pid,
      load: () => ({
        baseUrl: env.gatewayUrl,
        method: 'POST',
        paths: ['/api/email/send'],
        headers,
        body: JSON.stringify(body),
        expectStatus: 200,
        connections,
      }),
    },
  );
  await floor.stop();
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
  const oneBulk = async () => {
    const answer = JSON.parse(await post('/api/email/bulk', bulk)) as { sent?: number };
    if (answer.sent !== opts.size) throw new Error(`bulk sent ${answer.sent} of ${opts.size}`);
  };
  await oneBulk(); // the warm-up, outside the gateway's CPU figure
  const { result: ours, cores } = await cpuDuring({ gateway: env.gateway.pid }, () =>
    measure(
      `POST /api/email/bulk of ${opts.size}, batchDelay 0`,
      { count: opts.rounds, concurrency: 1, warmup: 0 },
      oneBulk,
    ),
  );
  const ratio = totalTimeRatio('bulk', 0.8, ours, floor);
  ratio.capacity = capacity(
    'bulk',
    (opts.size * ours.count) / ours.seconds,
    cores['gateway'],
    'emails/s per gateway core',
  );
  return ratio;
}

/**
 * What a send's work reaches besides the gateway: the database, and with
 * webhooks on (bench/webhooks.ts) the worker delivering them through
 * Temporal. Each round waits for all of them to be idle, so the floor never
 * pays for our deliveries still running, and their CPU is printed per side.
 */
function sendServices(env: BenchEnv): Record<string, number | undefined> {
  return { FerretDB: env.servicePids.ferretdb, Temporal: env.servicePids.temporal, worker: env.worker.pid };
}
