import { performance } from 'node:perf_hooks';
import { startBenchEnv } from './env.ts';
import { peakRssMiB } from './lib/processes.ts';
import type { Generator } from './lib/load.ts';
import { capacityLine, loadLines, ratioLine, row, table, type Ratio } from './lib/measure.ts';
import { benchClick } from './click.ts';
import { benchHealth } from './health.ts';
import { benchPixel } from './pixel.ts';
import { benchStatus } from './status.ts';
import { benchBulk, benchSend } from './send.ts';
import { benchSendWithWebhooks } from './webhooks.ts';
import {
  onScratchDatabase,
  STORAGE_FLOOR_WORK,
  storageBound,
  storageFloorLine,
  storageFloorSend,
  type StorageFloor,
} from './storage-floor.ts';
import { benchWorkerStart, benchWorkflows } from './workflows.ts';
import { benchQuota } from './quota.ts';

/**
 * One run of the whole bench (bench/run.ts runs it `--repeat` times): starts
 * the environment, measures every path beside its floor, prints the table,
 * then one line per ratio, exactly `ratio <name> <value> target <target>`
 * (bigger is better: floor time ÷ our time, or our throughput ÷ the
 * floor's), `reference health <value>`, one `load` line per side of each
 * HTTP path (the generator's CPU beside the server's), the storage floors
 * (`storage_floor <name> <value> <unit>`, bench/storage-floor.ts) with what
 * bound they put on the ratios, and the peak RSS of the gateway and the
 * worker. Answers the ratios; throws when a path fails.
 */
export interface RunOptions {
  quick: boolean;
  /** Names as in the ratio lines; empty: every path. */
  only: ReadonlySet<string>;
  generator: Generator;
  log: (line: string) => void;
}

const sizesOf = (quick: boolean) =>
  quick
    ? {
        http: { rounds: 1, seconds: 1, warmupSeconds: 1, poolSize: 300 },
        send: { rounds: 1, seconds: 1, warmupSeconds: 1 },
        storageSend: { count: 40, concurrency: 10, warmup: 20 },
        bulkSize: 100,
        bulkRounds: 1,
        sequential: 3,
        parallel: 10,
        bursts: 1,
        warmupBursts: 0,
        workerStart: 1,
        quota: { seconds: 3, inFlight: 20 },
      }
    : {
        http: { rounds: 4, seconds: 3, warmupSeconds: 5, poolSize: 1000 },
        send: { rounds: 4, seconds: 3, warmupSeconds: 5 },
        storageSend: { count: 800, concurrency: 10, warmup: 500 },
        bulkSize: 100,
        bulkRounds: 5,
        sequential: 20,
        parallel: 200,
        bursts: 4,
        warmupBursts: 1,
        workerStart: 5,
        quota: { seconds: 10, inFlight: 20 },
      };

export async function runOnce(opts: RunOptions): Promise<Ratio[]> {
  const { log } = opts;
  const SIZES = sizesOf(opts.quick);
  const wanted = (name: string) => opts.only.size === 0 || opts.only.has(name);
  const env = await startBenchEnv(log, opts.generator);
  const ratios: Ratio[] = [];
  const storageFloors: StorageFloor[] = [];
  try {
    const step = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
      const t0 = performance.now();
      log(`${name} …`);
      const result = await fn();
      log(`${name} done in ${((performance.now() - t0) / 1000).toFixed(1)}s`);
      return result;
    };
    const http = [
      ['health', benchHealth],
      ['pixel', benchPixel],
      ['click', benchClick],
      ['status', benchStatus],
    ] as const;
    for (const [name, bench] of http)
      if (wanted(name)) ratios.push(await step(name, () => bench(env, SIZES.http)));
    if (wanted('send')) {
      ratios.push(await step('send', () => benchSend(env, SIZES.send)));
      storageFloors.push(
        await step('send: storage floor', () =>
          onScratchDatabase(env.database.client, env.database.db.databaseName, (db) =>
            storageFloorSend(db, SIZES.storageSend),
          ),
        ),
      );
    }
    if (wanted('send_webhooks'))
      ratios.push(await step('send with webhooks', () => benchSendWithWebhooks(env, SIZES.send)));
    if (wanted('bulk'))
      ratios.push(
        await step('bulk', () => benchBulk(env, { size: SIZES.bulkSize, rounds: SIZES.bulkRounds })),
      );
    if (wanted('workflow_latency') || wanted('workflow_throughput')) {
      const w = await step('workflows', () =>
        benchWorkflows(env, {
          sequential: SIZES.sequential,
          parallel: SIZES.parallel,
          bursts: SIZES.bursts,
          warmupBursts: SIZES.warmupBursts,
        }),
      );
      if (wanted('workflow_latency')) {
        ratios.push(w.latency);
        storageFloors.push(w.storage.latency);
      }
      if (wanted('workflow_throughput')) {
        ratios.push(w.throughput);
        storageFloors.push(w.storage.throughput);
      }
    }
    if (wanted('quota')) ratios.push(await step('quota', () => benchQuota(env, SIZES.quota)));
    if (wanted('worker_start'))
      ratios.push(await step('worker start', () => benchWorkerStart(env, { rounds: SIZES.workerStart })));

    const [gatewayRss, workerRss] = await Promise.all([
      peakRssMiB(env.gateway.pid),
      peakRssMiB(env.worker.pid),
    ]);
    console.log(`\n${table(ratios)}`);
    for (const s of storageFloors) console.log(row(s.figures));
    console.log('');
    for (const r of ratios) console.log(ratioLine(r));
    for (const r of ratios) for (const line of loadLines(r)) console.log(line);
    for (const r of ratios) for (const c of r.capacity ?? []) console.log(capacityLine(c));
    for (const s of storageFloors) console.log(storageFloorLine(s));
    if (storageFloors.length > 0) console.log(explainStorageFloors(storageFloors, ratios));
    const mib = (v: number | undefined) => (v === undefined ? 'unknown' : `${v.toFixed(0)} MiB`);
    console.log(`peak_rss gateway ${mib(gatewayRss)}`);
    console.log(`peak_rss worker ${mib(workerRss)}`);
    return ratios;
  } finally {
    await env.close();
  }
}

/** What the send floor's rate against the storage alone's says. */
function sendFloorShare(share: number): string {
  if (share > 1)
    return 'faster than the storage alone: the two single measurements differ by more than the provider call costs (noise)';
  return `so the floor itself is ${share > 0.5 ? 'mostly database writes' : 'mostly the provider call and HTTP'}`;
}

/**
 * What the storage_floor lines show: for each, the work it measures and the
 * bound it sets. A workflow's no-op floor does no database work while ours
 * must do at least the storage floor's, so the ratio can reach at most the
 * floor's time ÷ the storage's time. The send floor does the same writes as
 * the storage floor plus the provider call: the share says how much of the
 * floor's own cost is the database.
 */
function explainStorageFloors(floors: StorageFloor[], measured: Ratio[]): string {
  const lines = [
    'storage floors: the database work of each path alone (mongodb driver, same concurrency, no gateway, provider or Temporal):',
  ];
  for (const s of floors) {
    const ratio = measured.find((r) => r.name === s.name);
    const work = STORAGE_FLOOR_WORK[s.name] ?? s.name;
    if (!ratio) {
      lines.push(`  ${s.name}: ${work}`);
      continue;
    }
    const bound = storageBound(s, ratio);
    lines.push(
      s.name === 'send'
        ? `  send: ${work}; the send floor runs at ${(1 / bound).toFixed(2)} of the storage alone's rate, ${sendFloorShare(1 / bound)}`
        : `  ${s.name}: ${work}; the storage alone allows a ratio of at most ${bound.toFixed(2)} (target ${ratio.target}): ${bound < ratio.target ? 'out of reach on this database' : 'not bounded by storage'}`,
    );
  }
  return lines.join('\n');
}
