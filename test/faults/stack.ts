import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MongoClient, type Db } from 'mongodb';
import { FakeSendGrid } from '../../infra/fake-sendgrid.ts';
import { answerBody } from '../support/http.ts';
import type { CaseResult } from '../support/case-runner.ts';
import { startMongo, startTemporal, type MongoHandle, type TemporalHandle } from '../../infra/services.ts';
import { RUN_TS, freePort, startProcess, type Spawned } from '../../infra/processes.ts';
import { TEST_SECRET, uniqueName } from '../support/env.ts';
import { welcomeBody } from '../support/sample-emails.ts';
import { until } from '../support/until.ts';

/**
 * What a fault case runs against: the real servers (Temporal with a
 * persistent SQLite file, FerretDB), the real gateway and worker as their own
 * processes (`node bin/run-ts.mjs api/server.ts | worker/worker.ts`), and the
 * fake SendGrid over real HTTP, which posts `processed` events to the
 * gateway's Event Webhook like SendGrid does. Loopback only. Each case gets a
 * database and a task queue of its own; `close()` stops what the case started.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface Servers {
  binaries: { temporal: string; ferretdb: string };
  scratch: string;
  /** Replaced when a case restarts the server. */
  temporal: TemporalHandle;
  temporalPort: number;
  /** Replaced when a case restarts the server. */
  mongo: MongoHandle;
  mongoPort: number;
  bundlePath: string;
}

/** Restarts of Temporal and FerretDB on the same port and data (cases 2 and 4). */
export async function startTemporalServer(s: Pick<Servers, 'binaries' | 'scratch'>, port: number) {
  return startTemporal({
    binary: s.binaries.temporal,
    port,
    headless: true,
    dbFile: join(s.scratch, 'temporal.sqlite'),
    logFile: join(s.scratch, 'temporal.log'),
  });
}

export async function startMongoServer(s: Pick<Servers, 'binaries' | 'scratch'>, port: number) {
  return startMongo({
    binary: s.binaries.ferretdb,
    port,
    dataDir: join(s.scratch, 'mongo'),
    logFile: join(s.scratch, 'mongo.log'),
  });
}

/** SIGKILL to a server's process group: no flush, no goodbye. */
export async function killServer(handle: { pid: number }): Promise<void> {
  try {
    process.kill(-handle.pid, 'SIGKILL');
  } catch {
    // gone already
  }
  await until(
    'the server to be gone',
    async () => {
      try {
        process.kill(handle.pid, 0);
        return false;
      } catch {
        return true;
      }
    },
    10_000,
    50,
  );
}

export interface Proc {
  spawned: Spawned;
  pid: number;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Answer {
  status: number;
  body: Record<string, unknown>;
  ms: number;
}

export class Stack {
  readonly fake = new FakeSendGrid();
  readonly dbName = uniqueName('faults');
  readonly taskQueue = uniqueName('faults');
  readonly caller = { companyId: randomUUID(), organizationId: randomUUID(), userId: randomUUID() };
  gatewayUrl = '';
  gateway: Proc | undefined;
  workers: Proc[] = [];
  private client!: MongoClient;
  db!: Db;
  private gatewayPort = 0;

  constructor(
    readonly servers: Servers,
    readonly name: string,
  ) {}

  get mongoUri(): string {
    return `${this.servers.mongo.uri}/${this.dbName}`;
  }

  private env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    return {
      PATH: process.env['PATH'],
      HOME: process.env['HOME'],
      MONGODB_URI: this.mongoUri,
      TEMPORAL_ADDRESS: `127.0.0.1:${this.servers.temporalPort}`,
      TEMPORAL_TASK_QUEUE: this.taskQueue,
      SENDGRID_API_KEY: 'SG.fault-suite',
      SENDGRID_BASE_URL: this.fake.url,
      SENDGRID_WEBHOOK_ALLOW_UNSIGNED: 'true',
      AUTH_MODE: 'trusted-headers',
      MAILROOM_SECRET: TEST_SECRET,
      WORKFLOW_BUNDLE_PATH: this.servers.bundlePath,
      LOG_LEVEL: 'warn',
      // Case 8's receiver runs on this machine; retries a second apart keep the case short.
      WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.1',
      WEBHOOK_RETRY_INITIAL_SECONDS: '1',
      WEBHOOK_RETRY_MAX_SECONDS: '2',
      ...extra,
    };
  }

  async start(options: { events?: boolean } = {}): Promise<this> {
    await this.fake.start();
    this.client = new MongoClient(this.servers.mongo.uri, { serverSelectionTimeoutMS: 5000 });
    await this.client.connect();
    this.db = this.client.db(this.dbName);
    this.gatewayPort = await freePort();
    this.gatewayUrl = `http://127.0.0.1:${this.gatewayPort}`;
    if (options.events !== false) this.fake.eventsUrl = `${this.gatewayUrl}/api/email/webhooks/sendgrid`;
    await this.startGateway();
    await this.startWorker();
    await this.warmUp();
    return this;
  }

  /**
   * One welcome run to completion, so the worker is polling before the case
   * begins (a worker process takes seconds to start); then the fake forgets it.
   */
  async warmUp(): Promise<void> {
    const [user] = await this.insertUsers(1);
    const [runId] = await this.triggerWelcome([user!]);
    await this.waitForRuns([runId!], 120_000);
    const eventsUrl = this.fake.eventsUrl;
    this.fake.reset();
    this.fake.eventsUrl = eventsUrl;
    await this.db.collection('emails').deleteMany({});
  }

  private log(what: string): string {
    return join(this.servers.scratch, `${this.name}-${what}.log`);
  }

  async startGateway(): Promise<Proc> {
    const spawned = await startProcess('gateway', process.execPath, [RUN_TS, 'api/server.ts'], {
      cwd: ROOT,
      env: this.env({ PORT: String(this.gatewayPort), PUBLIC_BASE_URL: this.gatewayUrl }),
      logFile: this.log('gateway'),
    });
    this.gateway = { spawned, pid: spawned.child.pid! };
    await until('the gateway', async () => (await fetch(`${this.gatewayUrl}/health`)).ok, 60_000);
    return this.gateway;
  }

  async startWorker(): Promise<Proc> {
    const spawned = await startProcess('worker', process.execPath, [RUN_TS, 'worker/worker.ts'], {
      cwd: ROOT,
      env: this.env(),
      logFile: this.log('worker'),
    });
    const proc = { spawned, pid: spawned.child.pid! };
    this.workers.push(proc);
    return proc;
  }

  /** SIGKILL: no drain, no goodbye; its connections close as the kernel closes them. */
  async killWorker(proc: Proc): Promise<void> {
    try {
      process.kill(-proc.pid, 'SIGKILL');
    } catch {
      // gone already
    }
    await proc.spawned.exited;
    this.workers = this.workers.filter((w) => w !== proc);
  }

  async request(method: string, path: string, body?: unknown, timeoutMs = 30_000): Promise<Answer> {
    const started = Date.now();
    const res = await fetch(`${this.gatewayUrl}${path}`, {
      method,
      headers: {
        'content-type': 'application/json',
        'x-company-id': this.caller.companyId,
        'x-organization-id': this.caller.organizationId,
        'x-user-id': this.caller.userId,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { status: res.status, body: await answerBody(res), ms: Date.now() - started };
  }

  /** `count` users, each with its own address. */
  /**
   * `count` HTTP sends (to `<prefix>-<i>@example.com`) started at once,
   * resolved once the provider has all of them (set `fake.delayMs` first, so
   * they wait there); `answers` settles with their answers, a failed request
   * as status 0 (a wrapper: an async function would wait for them too).
   */
  async sendsAtProvider(count: number, prefix: string): Promise<{ answers: Promise<Answer[]> }> {
    const sends = Array.from({ length: count }, (_, i) =>
      this.request(
        'POST',
        '/api/email/send',
        welcomeBody({ to: `${prefix}-${i}@example.com`, subject: `${prefix} ${i}` }),
        30_000,
      ).catch((err: unknown): Answer => ({ status: 0, body: { error: String(err) }, ms: 0 })),
    );
    await until(`${count} sends at the provider`, async () => this.fake.received.length >= count, 30_000, 20);
    return { answers: Promise.all(sends) };
  }

  async insertUsers(count: number): Promise<string[]> {
    const ids = Array.from({ length: count }, (_, i) => `${this.name}-user-${i}-${randomUUID().slice(0, 8)}`);
    await this.db
      .collection<{ _id: string }>('users')
      .insertMany(ids.map((_id) => ({ _id, email: `${_id}@example.com`, name: `User ${_id.slice(-8)}` })));
    return ids;
  }

  /** Starts a welcome run per user; the run ids in the same order. */
  async triggerWelcome(userIds: string[]): Promise<string[]> {
    const runIds: string[] = [];
    for (const userId of userIds) {
      const res = await this.request('POST', '/api/workflow/send-welcome-email', { userId });
      if (res.status !== 202) throw new Error(`trigger answered ${res.status}: ${JSON.stringify(res.body)}`);
      runIds.push(String(res.body['runId']));
    }
    return runIds;
  }

  /** Polls every run (as a caller would, by HTTP) until each is completed, failed or cancelled. */
  async waitForRuns(
    runIds: string[],
    timeoutMs: number,
  ): Promise<Map<string, { status: string; error: unknown; result: unknown }>> {
    const done = new Map<string, { status: string; error: unknown; result: unknown }>();
    const deadline = Date.now() + timeoutMs;
    while (done.size < runIds.length) {
      for (const runId of runIds) {
        if (done.has(runId)) continue;
        const res = await this.request(
          'GET',
          `/api/workflow/send-welcome-email?runId=${encodeURIComponent(runId)}`,
        ).catch(() => undefined);
        const status = String(res?.body['status'] ?? '');
        if (['completed', 'failed', 'cancelled'].includes(status))
          done.set(runId, { status, error: res?.body['error'], result: res?.body['result'] });
      }
      if (done.size === runIds.length) break;
      if (Date.now() > deadline)
        throw new Error(
          `${runIds.length - done.size} of ${runIds.length} runs unfinished after ${timeoutMs / 1000}s`,
        );
      await sleep(1000);
    }
    return done;
  }

  /**
   * Every welcome run's end and what SendGrid accepted for it: how many runs
   * completed, how many users got exactly one email, how many recipients more
   * than one.
   */
  async welcomeOutcome(runIds: string[], users: string[], timeoutMs: number) {
    const runs = await this.waitForRuns(runIds, timeoutMs);
    const completed = [...runs.values()].filter((r) => r.status === 'completed').length;
    const perRecipient = this.acceptedPerRecipient();
    const welcomeOnce = users.filter((u) => perRecipient.get(`${u}@example.com`) === 1).length;
    const duplicates = [...perRecipient.values()].filter((n) => n > 1).length;
    return { runs, completed, perRecipient, welcomeOnce, duplicates };
  }

  /**
   * While a server is down: each probe every 500 ms for `downMs`, a failed
   * request recorded as status 0 after `timeoutMs`.
   */
  async probeWhileDown(
    downMs: number,
    probes: ReadonlyArray<readonly [what: string, method: string, path: string, body: unknown]>,
    timeoutMs: number,
  ): Promise<Array<{ what: string } & Answer>> {
    const downAt = Date.now();
    const during: Array<{ what: string } & Answer> = [];
    while (Date.now() - downAt < downMs) {
      for (const [what, method, path, body] of probes) {
        const answer = await this.request(method, path, body, timeoutMs).catch((err: unknown) => ({
          status: 0,
          body: { error: String(err) },
          ms: timeoutMs,
        }));
        during.push({ what, ...answer });
      }
      await sleep(500);
    }
    return during;
  }

  /** After a server is back: how long until `/ready` answers 200. */
  async readyAgainAfterMs(): Promise<number> {
    const upAt = Date.now();
    await until(
      '/ready to answer 200',
      async () => (await this.request('GET', '/ready', undefined, 5000)).status === 200,
      60_000,
    );
    return Date.now() - upAt;
  }

  /** Accepted messages per recipient: what SendGrid would have delivered. */
  acceptedPerRecipient(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const mail of this.fake.accepted) {
      const to = mail.body.personalizations[0]?.to[0]?.email ?? '?';
      counts.set(to, (counts.get(to) ?? 0) + 1);
    }
    return counts;
  }

  /** Email records by status (the status a caller would read). */
  async recordsByStatus(): Promise<Record<string, number>> {
    const names = ['pending', 'sent', 'delivered', 'opened', 'bounced', 'failed'];
    const out: Record<string, number> = {};
    for (const r of await this.db.collection<{ status_rank: number }>('emails').find().toArray()) {
      const name = names[r.status_rank] ?? String(r.status_rank);
      out[name] = (out[name] ?? 0) + 1;
    }
    return out;
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.workers.map((w) => w.spawned.stop(15_000)));
    await this.gateway?.spawned.stop(15_000);
    await this.fake.stop();
    await this.db?.dropDatabase().catch(() => undefined);
    await this.client?.close();
  }
}

export interface FaultCase {
  id: number;
  name: string;
  run(servers: Servers): Promise<CaseResult>;
}

/** The distinct statuses each probe got while a server was down. */
export function answersWhileDown(during: ReadonlyArray<{ what: string } & Answer>): Record<string, number[]> {
  const names = [...new Set(during.map((d) => d.what))];
  return Object.fromEntries(
    names.map((w) => [w, [...new Set(during.filter((d) => d.what === w).map((d) => d.status))]]),
  );
}

/**
 * The documented at-most-once window (docs/guarantees.md): a run whose worker
 * was killed between its send's mark and the provider call fails "outcome
 * unknown" with nothing sent. True when `run` is such a run: failed so, and
 * its recipient's message never reached the provider (`received`).
 */
export function failedUnsent(
  run: { status: string; error?: unknown } | undefined,
  recipient: string,
  received: ReadonlySet<string | undefined>,
): boolean {
  return (
    run?.status === 'failed' &&
    JSON.stringify(run.error ?? '').includes('outcome unknown') &&
    !received.has(recipient)
  );
}

/** Collects the expectations a case checks; the case passes when none failed. */
export class Checks {
  readonly problems: string[] = [];
  expect(ok: boolean, what: string): void {
    if (!ok) this.problems.push(what);
  }
  result(figures: Record<string, unknown>): CaseResult {
    return { ok: this.problems.length === 0, figures, problems: this.problems };
  }
}
