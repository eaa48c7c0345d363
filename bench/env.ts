import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import { connectDatabase, type Database } from '../core/db.ts';
import { FakeSendGrid } from '../infra/fake-sendgrid.ts';
import { provision } from '../infra/provision.ts';
import { startScratchServers, type ServiceHandle } from '../infra/services.ts';
import { freePort } from '../infra/processes.ts';
import { WORKFLOWS_PATH } from '../worker/create-worker.ts';
import type { Generator } from './lib/load.ts';
import { startNode, waitForHttp, waitForLog, type NodeProcess } from './lib/processes.ts';

/**
 * What the bench runs against: MongoDB (MONGODB_URI, else a FerretDB started
 * here), Temporal (TEMPORAL_ADDRESS, else a dev server started here), a fake
 * SendGrid, and OUR processes exactly as deployed: the gateway
 * (api/server.ts) and the worker (worker/worker.ts with the prebuilt bundle),
 * each in its own process so its peak RSS is its own.
 */
export interface BenchEnv {
  scratch: string;
  log: (line: string) => void;
  /** mongodb:// URI of the bench's own database (dropped at the end). */
  mongoUri: string;
  temporalAddress: string;
  namespace: string;
  database: Database;
  temporal: Client;
  fake: FakeSendGrid;
  /** Environment of our gateway and worker (and of the floors, which use the same services). */
  serviceEnv: NodeJS.ProcessEnv;
  gateway: NodeProcess;
  gatewayUrl: string;
  /** The HTTP load generator (wrk, or the Node one: bench/lib/generator.ts). */
  generator: Generator;
  worker: NodeProcess;
  taskQueue: string;
  /** Pids of the FerretDB and Temporal servers the bench started (undefined: given by URI/address). */
  servicePids: { ferretdb?: number; temporal?: number };
  /** The prebuilt workflow bundle (dist-style) our worker runs. */
  bundlePath: string;
  bundleCode: string;
  /** Starts a floor process (or anything else) that is stopped with the environment. */
  start(name: string, script: string, env?: NodeJS.ProcessEnv): Promise<NodeProcess>;
  close(): Promise<void>;
}

/** The database part of a mongodb:// URI replaced by `dbName`. */
function withDatabase(uri: string, dbName: string): string {
  const url = new URL(uri);
  url.pathname = `/${dbName}`;
  return url.toString();
}

export async function startBenchEnv(log: (line: string) => void, generator: Generator): Promise<BenchEnv> {
  const scratch = await mkdtemp(join(tmpdir(), 'mailroom-bench-'));
  const services: ServiceHandle[] = [];
  const processes: NodeProcess[] = [];
  const cleanups: Array<() => Promise<unknown>> = [];
  const close = async () => {
    await Promise.allSettled(processes.reverse().map((p) => p.stop(15_000)));
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await Promise.allSettled(services.map((s) => s.stop()));
    if (process.env['BENCH_KEEP_LOGS'] === '1') log(`logs kept in ${scratch}`);
    else await rm(scratch, { recursive: true, force: true });
  };
  try {
    let mongoBase = process.env['MONGODB_URI'];
    let temporalAddress = process.env['TEMPORAL_ADDRESS'];
    const needs = { mongo: !mongoBase, temporal: !temporalAddress };
    const servicePids: BenchEnv['servicePids'] = {};
    if (needs.mongo || needs.temporal) {
      const binaries = await provision(needs, (line) => log(line));
      const { temporal, mongo } = await startScratchServers(binaries, scratch);
      if (temporal) {
        services.push(temporal);
        temporalAddress = temporal.address;
        servicePids.temporal = temporal.pid;
      }
      if (mongo) {
        services.push(mongo);
        mongoBase = `${mongo.uri}/mailroom`;
        servicePids.ferretdb = mongo.pid;
      }
    }
    const namespace = process.env['TEMPORAL_NAMESPACE'] ?? 'default';
    const suffix = randomUUID().slice(0, 8);
    const mongoUri = withDatabase(mongoBase!, `bench_${suffix}`);
    const database = await connectDatabase(mongoUri);
    cleanups.push(async () => {
      await database.db.dropDatabase();
      await database.close();
    });
    const connection = await Connection.connect({ address: temporalAddress! });
    cleanups.push(() => connection.close());
    const temporal = new Client({ connection, namespace });
    const fake = await new FakeSendGrid().start();
    cleanups.push(() => fake.stop());
    // The fake keeps every message it receives; the bench only needs the count.
    fake.onAccepted = () => {
      fake.received.length = 0;
    };

    log('bundling the workflows once (the prebuilt bundle our worker runs)');
    const { code: bundleCode } = await bundleWorkflowCode({
      workflowsPath: WORKFLOWS_PATH,
      logger: quietBundlerLogger,
    });
    const bundlePath = join(scratch, 'workflow-bundle.js');
    await writeFile(bundlePath, bundleCode);

    const taskQueue = `bench-${suffix}`;
    const gatewayPort = await freePort();
    const serviceEnv: NodeJS.ProcessEnv = {
      MONGODB_URI: mongoUri,
      TEMPORAL_ADDRESS: temporalAddress,
      TEMPORAL_NAMESPACE: namespace,
      TEMPORAL_TASK_QUEUE: taskQueue,
      SENDGRID_API_KEY: 'SG.bench',
      SENDGRID_BASE_URL: fake.url,
      PUBLIC_BASE_URL: 'http://mailroom.bench',
      MAILROOM_SECRET: randomBytes(32).toString('hex'),
      AUTH_MODE: 'trusted-headers',
      // The webhook bench's receiver runs on this machine.
      WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.1',
      // Production's default (docker-compose.yml): the bench measures what users run.
      LOG_LEVEL: 'info',
      LOG_PRETTY: 'false',
    };
    // BENCH_CPU_PROF=<dir>: our gateway and worker, and the floors' processes, write V8 CPU profiles
    // there at exit (open in Chrome DevTools / speedscope).
    const profDir = process.env['BENCH_CPU_PROF'];
    const start = async (name: string, script: string, env: NodeJS.ProcessEnv = {}) => {
      const nodeArgs =
        profDir && (['gateway', 'worker', 'noop-worker'].includes(name) || name.endsWith('-floor'))
          ? [`--cpu-prof`, `--cpu-prof-dir=${join(profDir, name)}`]
          : [];
      const proc = await startNode(
        name,
        script,
        { ...serviceEnv, ...env },
        join(scratch, `${name}.log`),
        nodeArgs,
      );
      processes.push(proc);
      return proc;
    };
    const gateway = await start('gateway', 'api/server.ts', { PORT: String(gatewayPort) });
    const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    const worker = await start('worker', 'worker/worker.ts', {
      WORKFLOW_BUNDLE_PATH: bundlePath,
      LOG_LEVEL: 'info',
    });
    await waitForHttp(gateway, `${gatewayUrl}/health`);
    // Ready as an orchestrator sees it (compose's healthcheck asks /ready every 10 s): the
    // gateway measured is in the state production's is, its Temporal client used once.
    await waitForHttp(gateway, `${gatewayUrl}/ready`);
    await waitForLog(worker, 'worker started');
    log(
      `MongoDB ${mongoUri.replace(/\/\/[^@/]*@/, '//***@')}; Temporal ${temporalAddress}; gateway ${gatewayUrl}`,
    );
    return {
      scratch,
      log,
      mongoUri,
      temporalAddress: temporalAddress!,
      namespace,
      database,
      temporal,
      fake,
      serviceEnv,
      gateway,
      gatewayUrl,
      generator,
      worker,
      taskQueue,
      servicePids,
      bundlePath,
      bundleCode,
      start,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** webpack's progress lines are noise here. */
export const quietBundlerLogger = {
  log() {},
  trace() {},
  debug() {},
  info() {},
  warn(message: string) {
    console.warn(message);
  },
  error(message: string) {
    console.error(message);
  },
};
