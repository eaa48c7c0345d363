import { Worker } from 'node:worker_threads';

/**
 * Polls `GET /health` every few milliseconds from a thread of its own, so
 * what it measures is the gateway's event loop, not this test process's
 * (which compresses attack bodies, generates requests and reads answers).
 * One keep-alive connection: a sample is one request's round trip.
 *
 * The machine is shared (2 cores, other test runs beside this one), so a
 * round trip also holds time the gateway spent not running at all: ready
 * while every core was busy with other processes, or asleep while V8's
 * garbage collector waited for its helper threads to get a core. What a
 * request can do to /health is keep the event loop busy, and Linux counts
 * per thread how long it ran and how long it waited for a CPU
 * (/proc/<pid>/task/<tid>/schedstat). Two upper bounds of how long the
 * gateway's event loop kept a /health request waiting follow, each absolute:
 * how long its main thread ran meanwhile (`cpuMs`; too high when the probe
 * was slow to read an answer already sent), and the round trip less the time
 * the gateway's main thread and the probe's thread waited for a CPU
 * (`ms - waitMs`; too high when the gateway slept). `heldMs` is the smaller.
 * (Where Linux does not tell, both are the round trip.)
 */
export interface HealthSample {
  /** When it was sent (epoch ms). */
  at: number;
  /** Round trip. */
  ms: number;
  /** How long the gateway's main thread ran meanwhile. */
  cpuMs: number;
  /** The smaller bound of how long the gateway's event loop kept this request waiting. */
  heldMs: number;
  /** How long the gateway's main thread and the probe's waited for a CPU meanwhile (the machine's doing). */
  waitMs: number;
}

export interface HealthReport {
  samples: number;
  /** The slowest round trip. */
  worstMs: number;
  /** The largest `heldMs`. */
  worstHeldMs: number;
  /** Samples whose `heldMs` is over the threshold given to `stop`. */
  slow: HealthSample[];
  /** Requests that got no 200 (an error, a timeout, another status). */
  failures: number;
}

const PROBE = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const fs = require('node:fs');
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const samples = [];
let running = true;
let failures = 0;
parentPort.on('message', () => (running = false));
// Epoch milliseconds (this thread's performance.now() has its own origin).
const now = () => performance.timeOrigin + performance.now();
// [ns on a CPU, ns waiting for one] of a thread; zeros where Linux does not tell.
const schedstat = (path) => {
  try {
    const [run, wait] = fs.readFileSync(path, 'utf8').split(' ');
    return [Number(run), Number(wait)];
  } catch {
    return [0, 0];
  }
};
const gateway = workerData.gatewayThread;
const self = '/proc/thread-self/schedstat';
const once = () =>
  new Promise((resolve) => {
    const started = now();
    const [gatewayRun, gatewayWait] = schedstat(gateway);
    const [, selfWait] = schedstat(self);
    const done = (ok) => {
      const ms = now() - started;
      if (!ok) failures++;
      const [gatewayRunAfter, gatewayWaitAfter] = schedstat(gateway);
      const [, selfWaitAfter] = schedstat(self);
      const waitMs = (gatewayWaitAfter - gatewayWait + selfWaitAfter - selfWait) / 1e6;
      samples.push([started, ms, (gatewayRunAfter - gatewayRun) / 1e6, waitMs]);
      resolve();
    };
    const req = http.get(workerData.url, { agent, timeout: 10000 }, (res) => {
      res.resume();
      res.on('end', () => done(res.statusCode === 200));
      res.on('error', () => done(false));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => done(false));
  });
(async () => {
  await once();
  parentPort.postMessage('ready');
  while (running) {
    await new Promise((r) => setTimeout(r, workerData.everyMs));
    await once();
  }
  agent.destroy();
  parentPort.postMessage({ samples, failures });
})();
`;

export interface HealthProbe {
  /** Stops polling (after `tailMs` more of it) and reports. */
  stop(options: { slowerThanMs: number; tailMs?: number }): Promise<HealthReport>;
}

/** Polls `baseUrl`/health; `pid`: the gateway's process (its main thread's scheduling is read). */
export async function startHealthProbe(baseUrl: string, pid: number, everyMs = 5): Promise<HealthProbe> {
  const worker = new Worker(PROBE, {
    eval: true,
    workerData: { url: `${baseUrl}/health`, everyMs, gatewayThread: `/proc/${pid}/task/${pid}/schedstat` },
  });
  type Raw = { samples: Array<[number, number, number, number]>; failures: number };
  const report = new Promise<Raw>((resolve, reject) => {
    worker.on('message', (message: unknown) => {
      if (message !== 'ready') resolve(message as Raw);
    });
    worker.once('error', reject);
  });
  await new Promise<void>((resolve, reject) => {
    worker.once('message', () => resolve());
    worker.once('error', reject);
  });
  return {
    async stop({ slowerThanMs, tailMs = 250 }) {
      await new Promise((r) => setTimeout(r, tailMs));
      worker.postMessage('stop');
      const raw = await report;
      await worker.terminate();
      const samples: HealthSample[] = raw.samples.map(([at, ms, cpuMs, waitMs]) => {
        const measured = cpuMs > 0 || waitMs > 0;
        const heldMs = measured ? Math.min(cpuMs, ms - waitMs) : ms;
        return {
          at: Math.round(at),
          ms: Math.round(ms),
          cpuMs: Math.round(cpuMs),
          heldMs: Math.round(heldMs),
          waitMs: Math.round(waitMs),
        };
      });
      return {
        samples: samples.length,
        worstMs: Math.max(0, ...samples.map((s) => s.ms)),
        worstHeldMs: Math.max(0, ...samples.map((s) => s.heldMs)),
        slow: samples.filter((s) => s.heldMs > slowerThanMs),
        failures: raw.failures,
      };
    },
  };
}
