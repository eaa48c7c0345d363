import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DefaultLogger, bundleWorkflowCode } from '@temporalio/worker';
import { provision } from '../../infra/provision.ts';
import { startScratchServers } from '../../infra/services.ts';
import { WORKFLOWS_PATH } from '../../worker/create-worker.ts';
import { CASES } from './cases.ts';
import { ScaleStack } from './stack.ts';
import { exitWith, runCase, summarize, type CaseOutcome } from '../support/case-runner.ts';

/**
 * `npm run test:scale [case numbers…]`: two gateways behind a round-robin
 * proxy and two workers on one task queue, against one Temporal server and
 * one database this script starts on free loopback ports (docs/scaling.md).
 * Each case prints its figures; the faults case runs last because it kills a
 * worker and stops a gateway. Exit code 0 when every case held; logs are kept
 * in the scratch directory otherwise.
 */

const log = (line: string) => console.log(`[scale] ${line}`);

async function main(): Promise<number> {
  const wanted = process.argv.slice(2).map(Number).filter(Number.isFinite);
  const chosen = wanted.length ? CASES.filter((_, i) => wanted.includes(i + 1)) : CASES;
  // SCALE_REPEAT=n runs the chosen cases n times over (a flaky case shows itself), the stack restored in between.
  const repeat = Math.max(1, Number(process.env['SCALE_REPEAT'] ?? 1) || 1);
  const cases = Array.from({ length: repeat }, () => chosen).flat();
  const started = Date.now();
  const binaries = await provision({ temporal: true, mongo: true }, log);
  const scratch = await mkdtemp(join(tmpdir(), 'mailroom-scale-'));
  const bundlePath = join(scratch, 'workflow-bundle.js');
  const [{ temporal, mongo }] = await Promise.all([
    startScratchServers(binaries, scratch),
    bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: new DefaultLogger('WARN') }).then(
      ({ code }) => writeFile(bundlePath, code),
    ),
  ]);
  if (!temporal || !mongo) throw new Error('could not start Temporal and the database');
  const results: CaseOutcome[] = [];
  let stack: ScaleStack | undefined;
  try {
    const running = await new ScaleStack({
      temporalAddress: temporal.address,
      mongoUri: mongo.uri,
      bundlePath,
      scratch,
    }).start();
    stack = running;
    log(
      `2 gateways, 2 workers, proxy ${running.proxy.url}: up in ${((Date.now() - started) / 1000).toFixed(1)}s`,
    );
    for (const [round, c] of cases.entries()) {
      const n = CASES.indexOf(c) + 1;
      if (round > 0) await running.restore();
      log(`case ${n}: ${c.name}`);
      results.push(await runCase(log, `case ${n} (${c.name})`, () => c.run(running)));
    }
  } finally {
    await stack?.close().catch(() => undefined);
    await Promise.allSettled([temporal.stop(), mongo.stop()]);
  }
  return summarize(log, results, cases.length, started, scratch);
}

await exitWith('scale', main);
