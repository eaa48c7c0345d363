import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseCapacityLine, parseLoadLine, parseRatioLine } from './lib/measure.ts';
import { ROOT } from './lib/processes.ts';
import { parseMedianLine } from './lib/summary.ts';
import { RUN_TS } from '../infra/processes.ts';

/**
 * The bench itself still works: BENCH_QUICK=1 runs every path against its
 * floor on the servers `npm test` started, and prints one parseable ratio
 * line per path, the generator's CPU beside each HTTP path's, the storage
 * floor lines, and the peak RSS lines; `--repeat` adds the median and the
 * minimum of each ratio across the runs. Speed is not judged here (figures
 * from a quick run on a busy CI machine mean nothing); `npm run bench` is for
 * that.
 */
const RATIOS = {
  pixel: 0.5,
  click: 0.5,
  status: 0.7,
  send: 0.8,
  send_webhooks: 0.8,
  bulk: 0.8,
  workflow_latency: 1,
  workflow_throughput: 1,
  worker_start: 3,
  quota: 0.95,
} as const;
/** The `capacity` lines a run may print (one is left out when its process's CPU read 0). */
const CAPACITIES = [
  'pixel',
  'click',
  'status',
  'send',
  'send_webhooks',
  'bulk',
  'workflow_worker',
  'workflow_temporal',
  'workflow_ferretdb',
  'workflow_gateway',
];
/** Loaded by the HTTP load generator: a `load` line for the floor and for ours. */
const HTTP_PATHS = ['health', 'pixel', 'click', 'status', 'send', 'send_webhooks'];

async function bench(args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [RUN_TS, join(ROOT, 'bench/run.ts'), ...args], {
    cwd: ROOT,
    env: { ...process.env, BENCH_QUICK: '1', BENCH_ONLY: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, out, err, lines: out.split('\n') };
}

test(
  'npm run bench (BENCH_QUICK=1) prints every ratio line with its target, the generator share, and the peak RSS',
  { timeout: 600_000 },
  async () => {
    const { code, out, err, lines } = await bench([], {});
    assert.equal(code, 0, `bench exited with ${code}\n${out.slice(-3000)}\n${err.slice(-3000)}`);

    const ratioLines = lines.filter((l) => l.startsWith('ratio '));
    const parsed = ratioLines.map((l) => ({ line: l, ratio: parseRatioLine(l) }));
    for (const { line, ratio } of parsed) assert.ok(ratio, `not a ratio line: ${line}`);
    const byName = new Map(parsed.map(({ ratio }) => [ratio!.name, ratio!]));
    assert.deepEqual([...byName.keys()].sort(), Object.keys(RATIOS).sort());
    assert.equal(ratioLines.length, Object.keys(RATIOS).length, 'exactly one line per ratio');
    for (const [name, target] of Object.entries(RATIOS)) {
      const ratio = byName.get(name)!;
      assert.equal(ratio.target, target, `${name} target`);
      assert.ok(Number.isFinite(ratio.value) && ratio.value > 0, `${name} value ${ratio.value}`);
    }
    assert.match(out, /^reference health \d+\.\d{3}$/m);
    assert.match(out, /^webhook_lag p50 \d+ ms p99 \d+ ms events \d+ of \d+ sends \(\d+ emails\)$/m);
    assert.match(out, /^quota achieved \d+\.\d\d\/s configured 50\/s sent \d+ refused \d+$/m);

    // The generator is named once, and each HTTP path's two sides say how much CPU it used beside the server.
    const generator = /^\[bench\] HTTP load generator: (wrk|node) \(/m.exec(out)?.[1];
    assert.ok(generator, 'the bench names its HTTP load generator');
    const loads = lines
      .filter((l) => l.startsWith('load '))
      .map((l) => ({ line: l, load: parseLoadLine(l) }));
    for (const { line, load } of loads) assert.ok(load, `not a load line: ${line}`);
    assert.deepEqual(
      loads.map(({ load }) => `${load!.name} ${load!.side}`).sort(),
      HTTP_PATHS.flatMap((p) => [`${p} floor`, `${p} ours`]).sort(),
    );
    for (const { line, load } of loads) {
      assert.equal(load!.generator, generator, line);
      assert.ok(load!.generatorCores > 0 && load!.serverCores > 0, line);
      // The verdict follows the rule the docs state (unless the printed rounding hides which side won).
      const { generatorCores: g, serverCores: s } = load!;
      if (Math.abs(g - s) > 0.01 && Math.abs(g - 0.9) > 0.01)
        assert.equal(load!.bound, g >= s || g >= 0.9, line);
    }
    // The services an HTTP path's work reaches, their CPU during each side's rounds (this test's
    // database and Temporal are given by address, so only the worker the bench started is named).
    for (const name of ['send', 'send_webhooks'])
      assert.match(
        out,
        new RegExp(
          `→ ${name}: .*; CPU in cores during ours: worker \\d+\\.\\d\\d; during the floor: worker \\d+\\.\\d\\d`,
        ),
        `${name} says what the worker used`,
      );

    // Beside each HTTP row of the table too.
    for (const row of lines.filter((l) => /^(GET|POST) \/.*\(\d+ conns\)/.test(l)))
      assert.match(row, new RegExp(`  ${generator} \\d+\\.\\d\\d / \\d+\\.\\d\\d`), row);

    // Work per core of the process that did it, for sizing: emails per gateway core, runs per worker core.
    const capacities = lines
      .filter((l) => l.startsWith('capacity '))
      .map((l) => ({ line: l, capacity: parseCapacityLine(l) }));
    for (const { line, capacity } of capacities) {
      assert.ok(capacity, `not a capacity line: ${line}`);
      assert.ok(CAPACITIES.includes(capacity.name), line);
      assert.ok(capacity.value > 0, line);
    }
    const capacityNames = capacities.map(({ capacity }) => capacity!.name);
    for (const name of ['send', 'bulk', 'workflow_worker'])
      assert.ok(capacityNames.includes(name), `a capacity line for ${name}`);
    assert.match(out, /^capacity send \d+\.\d emails\/s per gateway core$/m);
    assert.match(out, /^capacity workflow_worker \d+\.\d runs\/s per worker core$/m);

    // The storage floors beside them: the database work of send and of the workflow runs alone.
    assert.match(out, /^storage_floor send \d+\.\d+ sends\/s$/m);
    assert.match(out, /^storage_floor workflow_latency \d+\.\d+ ms$/m);
    assert.match(out, /^storage_floor workflow_throughput \d+\.\d+ runs\/s$/m);
    assert.match(out, /^storage floors: /m);
    assert.match(out, /^peak_rss gateway \d+ MiB$/m);
    assert.match(out, /^peak_rss worker \d+ MiB$/m);
    // Without --repeat, no summary.
    assert.doesNotMatch(out, /^ratio_median /m);
  },
);

test(
  'npm run bench -- --repeat 2 prints each run, then the median and the minimum of each ratio',
  { timeout: 600_000 },
  async () => {
    const { code, out, err, lines } = await bench(['--repeat', '2'], { BENCH_ONLY: 'health,status' });
    assert.equal(code, 0, `bench exited with ${code}\n${out.slice(-3000)}\n${err.slice(-3000)}`);
    const values = lines.filter((l) => l.startsWith('ratio status ')).map((l) => parseRatioLine(l)!.value);
    assert.equal(values.length, 2, 'one status line per run');
    const summary = lines.filter((l) => l.startsWith('ratio_median '));
    assert.equal(summary.length, 1, summary.join('\n'));
    const median = parseMedianLine(summary[0]!);
    assert.ok(median, `not a ratio_median line: ${summary[0]}`);
    assert.equal(median.name, 'status');
    assert.equal(median.target, 0.7);
    assert.equal(median.runs, 2);
    // Two runs: the median is their mean (up to the printed rounding), the minimum the smaller.
    assert.ok(Math.abs(median.median - (values[0]! + values[1]!) / 2) <= 0.001, summary[0]);
    assert.equal(median.min, Math.min(...values));
    assert.match(out, /^reference_median health \d+\.\d{3} min \d+\.\d{3} runs 2$/m);
    const reads = lines
      .filter((l) => l.startsWith('capacity status '))
      .map((l) => parseCapacityLine(l)!.value);
    assert.equal(reads.length, 2, 'one status capacity line per run');
    const capacity =
      /^capacity_median status (\d+\.\d) min (\d+\.\d) reads\/s per gateway core runs 2$/m.exec(out);
    assert.ok(capacity, 'the median and minimum of the status capacity');
    assert.ok(Math.abs(Number(capacity[1]) - (reads[0]! + reads[1]!) / 2) <= 0.1, capacity[0]);
    assert.equal(Number(capacity[2]), Math.min(...reads));
  },
);

test('npm run bench -- --repeat with anything but a whole number from 1 to 99 stops at once, saying why', async () => {
  for (const args of [['--repeat', '0'], ['--repeat'], ['--repeat=x'], ['--fast']]) {
    const { code, err } = await bench(args, {});
    assert.equal(code, 1, args.join(' '));
    assert.match(err, /--repeat takes a whole number from 1 to 99|unknown argument "--fast"/, args.join(' '));
  }
});
