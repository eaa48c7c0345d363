import { Agent, request } from 'node:http';
import type { EmailRecord } from '../core/email/records/record.ts';
import type { LoadResult } from './lib/load.ts';
import { closedLoop } from './lib/http-load.ts';

/** As wrk's `--timeout 30s` for the other paths. */
const REQUEST_TIMEOUT_MS = 30_000;

/** Events per webhook request: one bulk write of the record store (OPEN_WRITE_CHUNK). */
export const EVENTS_PER_REQUEST = 25;

/**
 * SendGrid Event Webhook bodies for `records`: each a batch of
 * EVENTS_PER_REQUEST `delivered` and `open` events, each for a different
 * record, as SendGrid posts them (custom arg `email_id` at the top level).
 * Different bodies name different records, so a load that cycles through
 * them reaches records all over the collection rather than the same few.
 */
export function webhookBodies(records: readonly EmailRecord[]): string[] {
  const bodies: string[] = [];
  for (let i = 0; i + EVENTS_PER_REQUEST <= records.length; i += EVENTS_PER_REQUEST) {
    const events = records.slice(i, i + EVENTS_PER_REQUEST).map((r, j) => ({
      event: j % 2 === 0 ? 'delivered' : 'open',
      email: r.recipient_email,
      email_id: r.email_id,
      timestamp: Math.floor(Date.now() / 1000),
      sg_event_id: `bench-${i + j}`,
    }));
    bodies.push(JSON.stringify(events));
  }
  return bodies;
}

/**
 * The webhook load: `connections` keep-alive connections each posting the
 * next of `bodies` to `url` as soon as the previous answer is read, for
 * `seconds`; anything but 200 fails it. The bench's generators send one body
 * only, hence this Node loop (node:http, as bench/lib/http-load.ts); it runs
 * the same for both sides of the ratio, and a webhook request (25 record
 * updates) costs the gateway far more than it costs this loop.
 */
export async function webhookLoad(spec: {
  url: string;
  bodies: readonly string[];
  connections: number;
  seconds: number;
  serverPid: number;
  name: string;
}): Promise<LoadResult> {
  const url = new URL(spec.url);
  const agent = new Agent({ keepAlive: true, maxSockets: spec.connections });
  let next = 0;
  const once = (body: string) =>
    new Promise<void>((resolve, reject) => {
      const r = request(
        {
          agent,
          host: url.hostname,
          port: url.port,
          method: 'POST',
          path: url.pathname,
          headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
        },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString('utf8')));
          res.on('end', () =>
            res.statusCode === 200
              ? resolve()
              : reject(new Error(`${spec.name}: answered ${res.statusCode}: ${text.slice(0, 300)}`)),
          );
          res.on('error', reject);
        },
      );
      r.on('error', reject);
      // A request that hangs fails the measurement, saying so, instead of the bench waiting forever.
      r.setTimeout(REQUEST_TIMEOUT_MS, () =>
        r.destroy(new Error(`${spec.name}: no answer within ${REQUEST_TIMEOUT_MS / 1000} s`)),
      );
      r.end(body);
    });
  try {
    return await closedLoop(spec, () => once(spec.bodies[next++ % spec.bodies.length]!));
  } finally {
    agent.destroy();
  }
}
