import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { chooseGenerator } from './lib/generator.ts';
import type { Ratio } from './lib/measure.ts';
import { capacitySummaryLines, parseArgs, summaryLines } from './lib/summary.ts';
import { runOnce } from './run-once.ts';
import { parseRecordsCount, runRecords } from './records.ts';

/**
 * `npm run bench [-- --repeat N]`: every hot path measured beside its floor,
 * in one run on one machine (docs/benchmarks.md), N times (each run with its
 * own servers and database, as N separate invocations would be). Each run
 * prints its table and machine-readable lines (bench/run-once.ts); with
 * `--repeat`, the end adds per ratio the median and the minimum across the
 * runs, exactly `ratio_median <name> <median> min <min> target <target> runs <n>`,
 * and the same of each `capacity` line (`capacity_median`).
 *
 *   BENCH_QUICK=1      a small version (about a minute) that checks the bench works
 *   BENCH_ONLY=pixel,send   only these paths (names as in the ratio lines)
 *   BENCH_GENERATOR=node    load the HTTP paths with the Node generator instead of wrk
 *   MONGODB_URI        use this MongoDB instead of starting FerretDB (a fresh database is used and dropped)
 *   TEMPORAL_ADDRESS   use this Temporal instead of starting a dev server
 *   BENCH_KEEP_LOGS=1  keep the scratch directory with every process's log
 *   BENCH_CPU_PROF=dir write CPU profiles of the gateway, the worker and the floors to dir (node --cpu-prof)
 *   BENCH_RECORDS=n    instead: send, status, pixel and webhook on a database of n records beside an empty one (bench/records.ts)
 */
const quick = process.env['BENCH_QUICK'] === '1';
const only = new Set((process.env['BENCH_ONLY'] ?? '').split(',').filter(Boolean));
const log = (line: string) => console.log(`[bench] ${line}`);
// The workers this process starts (worker_start) log their state changes at INFO.
Runtime.install({ logger: new DefaultLogger('WARN') });

const started = performance.now();
let exitCode = 0;
const scratch = await mkdtemp(join(tmpdir(), 'mailroom-bench-load-'));
try {
  const { repeat, repeatGiven } = parseArgs(process.argv.slice(2));
  log(`${quick ? 'quick run (BENCH_QUICK=1): figures only show the bench works' : 'full run'}`);
  const generator = await chooseGenerator({ quick, scratch, log });
  log(`HTTP load generator: ${generator.kind} (${generator.why})`);
  const rawRecords = process.env['BENCH_RECORDS'];
  const records = rawRecords ? parseRecordsCount(rawRecords, quick) : undefined;
  const runs: Ratio[][] = [];
  for (let i = 0; i < repeat; i++) {
    if (repeat > 1) log(`run ${i + 1} of ${repeat}`);
    runs.push(
      records
        ? await runRecords({ n: records, quick, only, generator, log })
        : await runOnce({ quick, only, generator, log }),
    );
  }
  if (repeatGiven) {
    console.log('');
    for (const line of summaryLines(runs)) console.log(line);
    for (const line of capacitySummaryLines(runs)) console.log(line);
  }
} catch (err) {
  console.error(err);
  exitCode = 1;
} finally {
  await rm(scratch, { recursive: true, force: true });
  log(`finished in ${((performance.now() - started) / 1000).toFixed(1)}s`);
}
process.exit(exitCode);
