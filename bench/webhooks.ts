import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EVENT_TYPES } from '../core/webhooks/index.ts';
import type { BenchEnv } from './env.ts';
import type { HttpPairOptions } from './lib/http-pair.ts';
import type { Ratio } from './lib/measure.ts';
import { benchSend, tenantHeaders } from './send.ts';

/** How long the bench waits, after the send rounds, for the last deliveries to arrive. */
const DRAIN_MS = 30_000;

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

/**
 * `send_webhooks` and `webhook_lag`: the send bench again (same floor, same
 * rounds) with one endpoint of the sending tenant subscribed to every event
 * type, on a receiver in this process answering 204. Every send then writes
 * its outbox entry and hands an `email.sent` delivery to Temporal, which the
 * worker POSTs. The ratio says what webhooks cost the send path (target as
 * `send`); the lag line is, per `email.sent` received, the time from the
 * event's `timestamp` (the record change) to its arrival at the receiver.
 */
export async function benchSendWithWebhooks(
  env: BenchEnv,
  sizes: Omit<HttpPairOptions, 'services'>,
): Promise<Ratio> {
  const lags: number[] = [];
  const ids = new Set<string>();
  const emails = new Set<string>();
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const arrived = Date.now();
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        type: string;
        timestamp: string;
        data: { email_id?: string };
      };
      const id = String(req.headers['webhook-id']);
      if (event.type === 'email.sent' && !ids.has(id)) {
        ids.add(id);
        emails.add(String(event.data.email_id));
        lags.push(arrived - Date.parse(event.timestamp));
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  const headers = tenantHeaders();
  const registered = await fetch(`${env.gatewayUrl}/api/webhooks`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ url, events: EVENT_TYPES.slice(0, 10) }),
  });
  if (registered.status !== 201) throw new Error(`webhook bench: registration answered ${registered.status}`);
  try {
    const ratio = await benchSend(env, sizes, { name: 'send_webhooks', headers });
    // Sends cut off at the end of a round are still finishing: count again until the events catch up.
    let { sent } = await sentCount(env, headers);
    const deadline = Date.now() + DRAIN_MS;
    while (ids.size < sent && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      ({ sent } = await sentCount(env, headers));
    }
    const sorted = [...lags].sort((a, b) => a - b);
    console.log(
      `webhook_lag p50 ${percentile(sorted, 50).toFixed(0)} ms p99 ${percentile(sorted, 99).toFixed(0)} ms ` +
        `events ${ids.size} of ${sent} sends (${emails.size} emails)`,
    );
    return { ...ratio, note: `${ratio.note ? `${ratio.note}; ` : ''}one endpoint subscribed to every event` };
  } finally {
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
}

/** How many emails the provider took for the tenant (records with `sent_at`: the events to expect). */
async function sentCount(env: BenchEnv, headers: Record<string, string>): Promise<{ sent: number }> {
  const sent = await env.database.db
    .collection('emails')
    .countDocuments({ company_id: headers['x-company-id'], sent_at: { $exists: true } });
  return { sent };
}
