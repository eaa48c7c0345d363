import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseRatioLine } from './lib/measure.ts';
import { ROOT } from './lib/processes.ts';
import { RUN_TS } from '../infra/services.ts';

/**
 * The bench itself still works: BENCH_QUICK=1 runs every path against its
 * floor on the servers `npm test` started, and prints one parseable ratio line
 * per path, the storage floor lines, and the peak RSS lines. Speed is not judged here (figures from a
 * quick run on a busy CI machine mean nothing); `npm run bench` is for that.
 */
const RATIOS = {
  pixel: 0.5,
  send: 0.7,
  bulk: 0.8,
  workflow_latency: 1,
  workflow_throughput: 1,
  worker_start: 3,
} as const;

test(
  'npm run bench (BENCH_QUICK=1) prints every ratio line with its target, and the peak RSS',
  { timeout: 600_000 },
  async () => {
    const child = spawn(process.execPath, [RUN_TS, join(ROOT, 'bench/run.ts')], {
      cwd: ROOT,
      env: { ...process.env, BENCH_QUICK: '1', BENCH_ONLY: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    assert.equal(code, 0, `bench exited with ${code}\n${out.slice(-3000)}\n${err.slice(-3000)}`);

    const lines = out.split('\n').filter((l) => l.startsWith('ratio '));
    const parsed = lines.map((l) => ({ line: l, ratio: parseRatioLine(l) }));
    for (const { line, ratio } of parsed) assert.ok(ratio, `not a ratio line: ${line}`);
    const byName = new Map(parsed.map(({ ratio }) => [ratio!.name, ratio!]));
    assert.deepEqual([...byName.keys()].sort(), Object.keys(RATIOS).sort());
    assert.equal(lines.length, Object.keys(RATIOS).length, 'exactly one line per ratio');
    for (const [name, target] of Object.entries(RATIOS)) {
      const ratio = byName.get(name)!;
      assert.equal(ratio.target, target, `${name} target`);
      assert.ok(Number.isFinite(ratio.value) && ratio.value > 0, `${name} value ${ratio.value}`);
    }
    // The storage floors beside them: the database work of send and of the workflow runs alone.
    assert.match(out, /^storage_floor send \d+\.\d+ sends\/s$/m);
    assert.match(out, /^storage_floor workflow_latency \d+\.\d+ ms$/m);
    assert.match(out, /^storage_floor workflow_throughput \d+\.\d+ runs\/s$/m);
    assert.match(out, /^storage floors: /m);
    assert.match(out, /^peak_rss gateway \d+ MiB$/m);
    assert.match(out, /^peak_rss worker \d+ MiB$/m);
  },
);
