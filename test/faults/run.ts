import { mkdtemp, rm } from 'node:fs/promises';
import { writeFile } from 'node:fs/promises';
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

  const results: Array<{ c: FaultCase; ok: boolean; seconds: number; error?: string }> = [];
  try {
    for (const c of cases) {
      log(`case ${c.id}: ${c.name}`);
      const t0 = Date.now();
      try {
        const result = await c.run(servers);
        const seconds = Math.round((Date.now() - t0) / 100) / 10;
        for (const [k, v] of Object.entries(result.figures)) log(`  ${k}: ${JSON.stringify(v)}`);
        for (const p of result.problems) log(`  PROBLEM: ${p}`);
        log(`  case ${c.id} ${result.ok ? 'held' : 'FAILED'} in ${seconds}s`);
        results.push({ c, ok: result.ok, seconds });
      } catch (err) {
        const seconds = Math.round((Date.now() - t0) / 100) / 10;
        const error = err instanceof Error ? err.message : String(err);
        log(`  case ${c.id} ERROR after ${seconds}s: ${error}`);
        results.push({ c, ok: false, seconds, error });
      }
    }
  } finally {
    await Promise.allSettled([servers.temporal.stop(), servers.mongo.stop()]);
  }
  log('summary:');
  for (const r of results) log(`  ${r.ok ? 'held  ' : 'FAILED'} case ${r.c.id} (${r.c.name}) ${r.seconds}s`);
  log(`total ${((Date.now() - started) / 1000).toFixed(0)}s`);
  const ok = results.every((r) => r.ok);
  if (ok) await rm(scratch, { recursive: true, force: true });
  else log(`logs kept in ${scratch}`);
  return ok ? 0 : 1;
}

let code = 1;
try {
  code = await main();
} catch (err) {
  console.error(`[faults] ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
}
process.exit(code);
