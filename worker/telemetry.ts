import { createServer as createHttpServer } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import { METRICS_CHALLENGE, metricsAccess } from '../core/metrics-token.ts';
import type { RuntimeOptions } from '@temporalio/worker';
import type { Config } from '../core/config.ts';
import { exposition } from '../core/metrics.ts';

/**
 * The worker's one scrape target, `http://<WORKER_METRICS_ADDRESS>/metrics`:
 *
 * - the Temporal SDK's own metrics (workflow and activity task latencies,
 *   pollers, task slots, sticky cache, request failures: `temporal_*`), from
 *   the SDK's Prometheus exporter, which the Runtime binds to a loopback port
 *   of its own; names and units are the SDK's defaults (durations in
 *   milliseconds), which Temporal's published Grafana dashboards expect;
 * - Mailroom's registry of this process (core/metrics.ts): the emails that
 *   workflow activities send and their provider calls are counted here, not
 *   in the gateway, plus the process metrics.
 *
 * Unset: no metrics at all (the default outside docker compose, so two local
 * workers never fight over a port).
 */
export interface WorkerMetrics {
  /** For Runtime.install: the SDK's exporter on its loopback address. */
  telemetryOptions: NonNullable<RuntimeOptions['telemetryOptions']>;
  /** Where the SDK's exporter listens (host:port). */
  sdkAddress: string;
  /** Serves the combined /metrics on WORKER_METRICS_ADDRESS. */
  listen(): Promise<void>;
  close(): Promise<void>;
}

export async function workerMetrics(
  config: Pick<Config, 'workerMetricsAddress'> & Partial<Pick<Config, 'metricsToken'>>,
): Promise<WorkerMetrics | undefined> {
  if (config.workerMetricsAddress === undefined) return undefined;
  const { hostname, port } = new URL(`http://${config.workerMetricsAddress}`);
  const sdkAddress = `127.0.0.1:${await freeLoopbackPort()}`;
  const mayRead = metricsAccess(config.metricsToken);
  const server = createHttpServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    if (!mayRead(req.headers.authorization)) {
      res
        .writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': METRICS_CHALLENGE })
        .end('unauthorized\n');
      return;
    }
    void combinedExposition(sdkAddress).then(
      ({ contentType, body }) => {
        res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      (err: unknown) => {
        res.writeHead(500, { 'content-type': 'text/plain' }).end(`${String(err)}\n`);
      },
    );
  });
  return {
    telemetryOptions: { metrics: { prometheus: { bindAddress: sdkAddress } } },
    sdkAddress,
    listen: () =>
      new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        // `[::]` in the address is the URL's bracketed form of `::`.
        server.listen(Number(port), hostname.replace(/^\[(.*)\]$/, '$1'), () => resolve());
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Mailroom's registry, then the SDK's exporter (left out, with a comment saying why, when it does not answer). */
async function combinedExposition(sdkAddress: string): Promise<{ contentType: string; body: string }> {
  const own = await exposition();
  let sdk: string;
  try {
    const res = await fetch(`http://${sdkAddress}/metrics`, { signal: AbortSignal.timeout(5000) });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    sdk = await res.text();
  } catch (err) {
    sdk = `# Temporal SDK metrics unavailable: ${String(err).replace(/\s+/g, ' ')}\n`;
  }
  const joined = own.body.endsWith('\n') ? own.body : `${own.body}\n`;
  return { contentType: own.contentType, body: joined + sdk };
}

/** A port nothing listens on right now, for the SDK's exporter (it cannot report one it picked itself). */
function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createTcpServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}
