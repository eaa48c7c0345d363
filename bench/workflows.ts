import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { NativeConnection, Worker } from '@temporalio/worker';
import { loadConfig } from '../core/config.ts';
import { WORKFLOWS_PATH } from '../worker/create-worker.ts';
import type { BenchEnv } from './env.ts';
import {
  capacity,
  combine,
  figures,
  medianRatio,
  roundRatios,
  totalTimeRatio,
  type Figures,
  type Ratio,
} from './lib/measure.ts';
import { cpuDuring, formatCores, waitForLog } from './lib/processes.ts';
import { alternatingRounds } from './lib/rounds.ts';
import { tenantHeaders } from './send.ts';
import { createActivities } from '../activities/index.ts';
import { onScratchDatabase, storageFloorWorkflows, type StorageFloor } from './storage-floor.ts';

/**
 * The workflow paths. Ours: send-welcome-email triggered through the gateway
 * (POST /api/workflow/send-welcome-email) on our worker process, waited for
 * with the Temporal client. The floor: a workflow of as many no-op normal
 * activities (bench/floors/noop-workflow.ts) on a worker process with the same
 * settings, on the same Temporal server, started with the client.
 */
export interface WorkflowBench {
  latency: Ratio;
  throughput: Ratio;
  /** The same runs' database work alone (bench/storage-floor.ts). */
  storage: { latency: StorageFloor; throughput: StorageFloor };
}

export async function benchWorkflows(
  env: BenchEnv,
  opts: { sequential: number; parallel: number; bursts: number; warmupBursts: number },
): Promise<WorkflowBench> {
  const floorQueue = `${env.taskQueue}-floor`;
  const floorWorker = await env.start('noop-worker', 'bench/floors/noop-worker.ts', {
    TEMPORAL_TASK_QUEUE: floorQueue,
  });
  await waitForLog(floorWorker, 'noop worker started');

  const users = env.database.db.collection<{ _id: string; email: string; name: string }>('users');
  const newUser = async () => {
    const _id = `bench-${randomUUID()}`;
    await users.insertOne({ _id, email: `${_id}@example.com`, name: 'Bench User' });
    return _id;
  };
  const headers = tenantHeaders();
  const ours = async (userId: string) => {
    const res = await fetch(`${env.gatewayUrl}/api/workflow/send-welcome-email`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ userId }),
    });
    const answer = (await res.json()) as { runId?: string };
    if (res.status !== 202 || !answer.runId)
      throw new Error(`trigger answered ${res.status}: ${JSON.stringify(answer)}`);
    return answer.runId;
  };
  const oursDone = async (runId: string) => {
    const result = (await env.temporal.workflow.getHandle(runId).result()) as { message?: string };
    if (result.message !== 'welcome email sent')
      throw new Error(`welcome run ${runId}: ${JSON.stringify(result)}`);
  };
  const floorStart = async (userId: string) => {
    const handle = await env.temporal.workflow.start('noopWorkflow', {
      taskQueue: floorQueue,
      workflowId: `noop-${randomUUID()}`,
      args: [{ userId }],
    });
    return handle.workflowId;
  };
  const floorDone = async (runId: string) => {
    await env.temporal.workflow.getHandle(runId).result();
  };

  const sequential = async (
    name: string,
    start: (userId: string) => Promise<string>,
    done: (id: string) => Promise<void>,
  ): Promise<Figures> => {
    const userIds = await Promise.all(Array.from({ length: opts.sequential + 2 }, newUser));
    for (const u of userIds.slice(0, 2)) await done(await start(u)); // warm-up
    const latencies: number[] = [];
    const t0 = performance.now();
    for (const u of userIds.slice(2)) {
      const t = performance.now();
      await done(await start(u));
      latencies.push(performance.now() - t);
    }
    return figures(name, latencies, (performance.now() - t0) / 1000);
  };
  /** Raw: the rounds are combined (see combined). */
  const burst = async (
    start: (userId: string) => Promise<string>,
    done: (id: string) => Promise<void>,
  ): Promise<Burst> => {
    const userIds = await Promise.all(Array.from({ length: opts.parallel }, newUser));
    const latencies: number[] = [];
    const t0 = performance.now();
    await Promise.all(
      userIds.map(async (u) => {
        const t = performance.now();
        await done(await start(u));
        latencies.push(performance.now() - t);
      }),
    );
    return { latencies, seconds: (performance.now() - t0) / 1000 };
  };

  const floorLatency = await sequential('floor: no-op workflow, 4 no-op activities', floorStart, floorDone);
  const oursLatency = await sequential('send-welcome-email, trigger → completed', ours, oursDone);
  // The bursts, in `opts.bursts` rounds of one floor burst and one of ours,
  // the order alternating: on a shared machine one burst's total time varied
  // by ±15% from run to run, and the ratio compares the sums. While they run,
  // how busy each process is (cores): who bounds the throughput. First
  // `opts.warmupBursts` unmeasured bursts of each: steady state, as for send
  // and the pixel (the sequential runs above are too few to JIT-compile the
  // activities' path: rendering, link scanning, the provider client).
  for (let i = 0; i < opts.warmupBursts; i++) {
    await burst(floorStart, floorDone);
    await burst(ours, oursDone);
  }
  const { ferretdb, temporal } = env.servicePids;
  const floorName = `floor: ${opts.parallel} no-op runs at once`;
  const oursName = `${opts.parallel} welcome runs at once`;
  // Each burst starts with the servers and workers idle: none pays for the previous one's background work.
  const { floor: floorRounds, ours: oursRounds } = await alternatingRounds(
    opts.bursts,
    [temporal, ferretdb, env.worker.pid, env.gateway.pid, floorWorker.pid],
    {
      floor: () =>
        cpuDuring({ 'no-op worker': floorWorker.pid, Temporal: temporal }, () =>
          burst(floorStart, floorDone),
        ),
      ours: () =>
        cpuDuring(
          { worker: env.worker.pid, FerretDB: ferretdb, Temporal: temporal, gateway: env.gateway.pid },
          () => burst(ours, oursDone),
        ),
    },
  );
  const floorBurst = combined(floorName, floorRounds);
  const oursBurst = combined(oursName, oursRounds);
  await floorWorker.stop(15_000);
  const storage = await onScratchDatabase(env.database.client, env.database.db.databaseName, (db) =>
    storageFloorWorkflows(db, {
      ...opts,
      concurrency: loadConfig({ ...process.env, ...env.serviceEnv }).workerConcurrency,
    }),
  );
  const throughput = totalTimeRatio('workflow_throughput', 1.0, oursBurst.result, floorBurst.result);
  throughput.note =
    `${opts.bursts} rounds, by round ${roundRatios(
      oursRounds.map((r) => r.result),
      floorRounds.map((r) => r.result),
    )}; ` +
    `CPU in cores during ours: ${formatCores(oursBurst.cores)}; during the floor: ${formatCores(floorBurst.cores)}`;
  // Runs per CPU second of each process that worked for them: what sizes a deployment.
  const runsPerSecond = oursBurst.result.count / oursBurst.result.seconds;
  throughput.capacity = ['worker', 'Temporal', 'FerretDB', 'gateway'].flatMap((process) =>
    capacity(
      `workflow_${process.toLowerCase()}`,
      runsPerSecond,
      oursBurst.cores[process],
      `runs/s per ${process} core`,
    ),
  );
  return {
    latency: medianRatio('workflow_latency', 1.0, oursLatency, floorLatency),
    throughput,
    storage,
  };
}

/** One burst: each run's time from its start to its completion, and the burst's total. */
type Burst = { latencies: number[]; seconds: number };
type Measured = { result: Burst; cores: Record<string, number> };

/** Several bursts as one: their runs together, their times summed, cores averaged over the time. */
function combined(name: string, rounds: Measured[]): { result: Figures; cores: Record<string, number> } {
  const seconds = rounds.reduce((sum, r) => sum + r.result.seconds, 0);
  const cores: Record<string, number> = {};
  for (const r of rounds)
    for (const [process, c] of Object.entries(r.cores))
      cores[process] = (cores[process] ?? 0) + (c * r.result.seconds) / seconds;
  return {
    result: combine(
      name,
      rounds.map((r) => r.result),
    ),
    cores,
  };
}

/**
 * worker_start: from Worker.create to polling, with the prebuilt bundle our
 * worker runs (WORKFLOW_BUNDLE_PATH) against bundling workflows/ at start.
 * Both in this process, with our activities, on a throwaway task queue.
 */
export async function benchWorkerStart(env: BenchEnv, opts: { rounds: number }): Promise<Ratio> {
  const connection = await NativeConnection.connect({ address: env.temporalAddress });
  try {
    const activities = createActivities({
      db: env.database.db,
      email: undefined as never, // never called: no task reaches these workers
      config: undefined as never,
      webhooks: undefined as never,
    });
    const startOnce = async (code: 'prebuilt' | 'bundle'): Promise<number> => {
      const t0 = performance.now();
      const worker = await Worker.create({
        connection,
        namespace: env.namespace,
        taskQueue: `${env.taskQueue}-start-${randomUUID().slice(0, 8)}`,
        ...(code === 'prebuilt'
          ? { workflowBundle: { codePath: env.bundlePath } }
          : { workflowsPath: WORKFLOWS_PATH }),
        activities,
      });
      const running = worker.run();
      while (worker.getState() !== 'RUNNING') await new Promise((r) => setImmediate(r));
      const ms = performance.now() - t0;
      worker.shutdown();
      await running;
      return ms;
    };
    const times = { prebuilt: [] as number[], bundle: [] as number[] };
    for (let i = 0; i < opts.rounds; i++) {
      times.bundle.push(await startOnce('bundle'));
      times.prebuilt.push(await startOnce('prebuilt'));
    }
    const seconds = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / 1000;
    return medianRatio(
      'worker_start',
      3,
      figures('worker start, prebuilt bundle', times.prebuilt, seconds(times.prebuilt)),
      figures('floor: worker start, bundling at start', times.bundle, seconds(times.bundle)),
    );
  } finally {
    await connection.close();
  }
}
