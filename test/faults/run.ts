import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DefaultLogger, bundleWorkflowCode } from '@temporalio/worker';
import { provision } from '../../infra/provision.ts';
import { freePort } from '../../infra/processes.ts';
import { WORKFLOWS_PATH } from '../../worker/create-worker.ts';
import { startMongoServer, startTemporalServer, type FaultCase, type Servers } from './stack.ts';
import { workerKilled } from './worker-killed.ts';
import { providerOutage } from './provider-outage.ts';
import { acceptedThenDropped } from './accepted-then-dropped.ts';
import { databaseDown } from './database-down.ts';
import { gatewayDrain } from './gateway-drain.ts';
import { temporalRestart } from './temporal-restart.ts';
import { scheduledRestart } from './scheduled-restart.ts';
import { webhooksRestart } from './webhooks-restart.ts';
import { gatewayKilled } from './gateway-killed.ts';
import { exitWith, runCase, summarize, type CaseOutcome } from '../support/case-runner.ts';

/**
 * `npm run test:faults [case numbers…]`: what the platform survives, each
 * fault against the real servers this script starts (Temporal with a
 * persistent SQLite history, FerretDB) on free loopback ports, the real
 * gateway and worker processes, and the fake SendGrid. Each case is bounded
 * in time, prints its figures, and stops what it started; the servers are
 * stopped at the end whatever happened. Exit code 0 when every case held.
 */

const CASES: FaultCase[] = [
  workerKilled,
  temporalRestart,
  providerOutage,
  databaseDown,
  gatewayDrain,
  acceptedThenDropped,
  scheduledRestart,
  webhooksRestart,
  gatewayKilled,
].sort((a, b) => a.id - b.id);

const log = (line: string) => console.log(`[faults] ${line}`);

async function main(): Promise<number> {
  const wanted = process.argv.slice(2).map(Number).filter(Number.isFinite);
  const cases = wanted.length ? CASES.filter((c) => wanted.includes(c.id)) : CASES;
  if (cases.length === 0) {
    console.error(`[faults] no such case; known: ${CASES.map((c) => c.id).join(', ')}`);
    return 1;
  }
  const started = Date.now();
  const provisioned = await provision({ temporal: true, mongo: true }, log);
  if (!provisioned.temporal || !provisioned.ferretdb) throw new Error('could not provision the servers');
  const scratch = await mkdtemp(join(tmpdir(), 'mailroom-faults-'));
  const base = { binaries: { temporal: provisioned.temporal, ferretdb: provisioned.ferretdb }, scratch };
  const [temporalPort, mongoPort] = [await freePort(), await freePort()];
  const bundlePath = join(scratch, 'workflow-bundle.js');
  const [temporal, mongo] = await Promise.all([
    startTemporalServer(base, temporalPort),
    startMongoServer(base, mongoPort),
    bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: new DefaultLogger('WARN') }).then(
      ({ code }) => writeFile(bundlePath, code),
    ),
  ]);
  const servers: Servers = { ...base, temporal, temporalPort, mongo, mongoPort, bundlePath };
  log(`servers up in ${((Date.now() - started) / 1000).toFixed(1)}s; logs in ${scratch}`);

  const results: CaseOutcome[] = [];
  try {
    for (const c of cases) {
      log(`case ${c.id}: ${c.name}`);
      results.push(await runCase(log, `case ${c.id} (${c.name})`, () => c.run(servers)));
    }
  } finally {
    await Promise.allSettled([servers.temporal.stop(), servers.mongo.stop()]);
  }
  return summarize(log, results, cases.length, started, scratch);
}

await exitWith('faults', main);
