import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { figures, type Figures } from './measure.ts';

export interface LoadRequest {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/**
 * A small keep-alive HTTP load generator: `count` requests over `connections`
 * sockets (each connection sends its next request when the previous answer is
 * read). node:http rather than fetch: less CPU per request in this process, so
 * the load generator is less of a ceiling on the floors it measures.
 * Any status other than `expectStatus` aborts the measurement.
 */
export async function httpLoad(
  name: string,
  baseUrl: string,
  opts: { count: number; connections: number; warmup?: number; expectStatus?: number },
  make: (i: number) => LoadRequest,
): Promise<Figures> {
  const url = new URL(baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: opts.connections });
  const expect = opts.expectStatus ?? 200;
  const once = (req: LoadRequest) =>
    new Promise<void>((resolve, reject) => {
      const body = req.body === undefined ? undefined : Buffer.from(req.body);
      const r = request(
        {
          agent,
          host: url.hostname,
          port: url.port,
          method: req.method,
          path: req.path,
          headers: { ...req.headers, ...(body ? { 'content-length': String(body.length) } : {}) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            if (res.statusCode !== expect)
              reject(
                new Error(
                  `${req.method} ${req.path} answered ${res.statusCode}: ${Buffer.concat(chunks).toString('utf8').slice(0, 300)}`,
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
    const warmup = opts.warmup ?? Math.min(50, opts.count);
    await Promise.all(Array.from({ length: warmup }, (_, i) => once(make(-1 - i))));
    const latencies: number[] = [];
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: opts.connections }, async () => {
        while (next < opts.count) {
          const i = next++;
          const t0 = performance.now();
          await once(make(i));
          latencies.push(performance.now() - t0);
        }
      }),
    );
    return figures(name, latencies, (performance.now() - started) / 1000);
  } finally {
    agent.destroy();
  }
}
