import { performance } from 'node:perf_hooks';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { startBenchEnv } from './env.ts';
import { peakRssMiB } from './lib/processes.ts';
import { ratioLine, row, table, type Ratio } from './lib/measure.ts';
import { benchPixel } from './pixel.ts';
import { benchBulk, benchSend } from './send.ts';
import {
  onScratchDatabase,
  STORAGE_FLOOR_WORK,
  storageBound,
  storageFloorLine,
  storageFloorSend,
  type StorageFloor,
} from './storage-floor.ts';
import { benchWorkerStart, benchWorkflows } from './workflows.ts';

/**
 * `npm run bench`: every hot path measured beside its floor, in one run on one
 * machine (docs/benchmarks.md). Prints a table, then one line per ratio,
 * exactly `ratio <name> <value> target <target>` (bigger is better: floor
 * time ÷ our time, or our throughput ÷ the floor's), then the peak RSS of the
 * gateway and the worker. Beside the ratios, the storage floors: the database
 * work of `send` and of the workflow runs alone (bench/storage-floor.ts), one
 * line each, exactly `storage_floor <name> <value> <unit>`, and what bound
 * they put on the ratios.
 *
 *   BENCH_QUICK=1      a small version (under a minute) that checks the bench works
 *   MONGODB_URI        use this MongoDB instead of starting FerretDB (a fresh database is used and dropped)
 *   TEMPORAL_ADDRESS   use this Temporal instead of starting a dev server
 *   BENCH_ONLY=pixel,send   only these paths (names as in the ratio lines)
 *   BENCH_KEEP_LOGS=1  keep the scratch directory with every process's log
 *   BENCH_CPU_PROF=dir write CPU profiles of the gateway and the worker to dir (node --cpu-prof)
 */
const QUICK = process.env['BENCH_QUICK'] === '1';
const SIZES = QUICK
  ? {
      pixel: 300,
      pixelRounds: 1,
      pixelWarmup: 50,
      send: 40,
      sendRounds: 1,
      sendWarmup: 20,
      bulkSize: 100,
      bulkRounds: 1,
      sequential: 3,
      parallel: 10,
      bursts: 1,
      warmupBursts: 0,
      workerStart: 1,
    }
  : {
      pixel: 4000,
      pixelRounds: 4,
      pixelWarmup: 2000,
      send: 800,
      sendRounds: 4,
      sendWarmup: 500,
      bulkSize: 100,
      bulkRounds: 5,
      sequential: 20,
      parallel: 200,
      bursts: 4,
      warmupBursts: 1,
      workerStart: 5,
    };
const only = new Set((process.env['BENCH_ONLY'] ?? '').split(',').filter(Boolean));
const wanted = (name: string) => only.size === 0 || only.has(name);

const log = (line: string) => console.log(`[bench] ${line}`);
// The workers this process starts (worker_start) log their state changes at INFO.
Runtime.install({ logger: new DefaultLogger('WARN') });
const started = performance.now();
log(`${QUICK ? 'quick run (BENCH_QUICK=1): figures only show the bench works' : 'full run'}`);
const env = await startBenchEnv(log);
const ratios: Ratio[] = [];
const storageFloors: StorageFloor[] = [];
let exitCode = 0;
try {
  const step = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    log(`${name} …`);
    const result = await fn();
    log(`${name} done in ${((performance.now() - t0) / 1000).toFixed(1)}s`);
    return result;
  };
  if (wanted('pixel'))
    ratios.push(
      await step('pixel', () =>
        benchPixel(env, {
          count: SIZES.pixel,
          connections: 20,
          rounds: SIZES.pixelRounds,
          warmup: SIZES.pixelWarmup,
        }),
      ),
    );
  if (wanted('send')) {
    ratios.push(
      await step('send', () =>
        benchSend(env, {
          count: SIZES.send,
          concurrency: 10,
          rounds: SIZES.sendRounds,
          warmup: SIZES.sendWarmup,
        }),
      ),
    );
    storageFloors.push(
      await step('send: storage floor', () =>
        onScratchDatabase(env.database.client, env.database.db.databaseName, (db) =>
          storageFloorSend(db, { count: SIZES.send, concurrency: 10, warmup: SIZES.sendWarmup }),
        ),
      ),
    );
  }
  if (wanted('bulk'))
    ratios.push(await step('bulk', () => benchBulk(env, { size: SIZES.bulkSize, rounds: SIZES.bulkRounds })));
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
  for (const s of storageFloors) console.log(storageFloorLine(s));
  if (storageFloors.length > 0) console.log(explainStorageFloors(storageFloors, ratios));
  const mib = (v: number | undefined) => (v === undefined ? 'unknown' : `${v.toFixed(0)} MiB`);
  console.log(`peak_rss gateway ${mib(gatewayRss)}`);
  console.log(`peak_rss worker ${mib(workerRss)}`);
} catch (err) {
  console.error(err);
  exitCode = 1;
} finally {
  await env.close();
  log(`finished in ${((performance.now() - started) / 1000).toFixed(1)}s`);
}
process.exit(exitCode);

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
