import { readFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MongoClient, type Db } from 'mongodb';
import { createKeyStore, type KeyStore } from '../../core/api-keys/key-store.ts';
import { createDailyQuotas } from '../../core/email/send/quotas/daily-quota.ts';
import { SCOPES } from '../../core/identity.ts';
import { createLogger } from '../../core/logger.ts';
import { FakeSendGrid } from '../../infra/fake-sendgrid.ts';
import { RUN_TS, freePort, startProcess } from '../../infra/processes.ts';
import { TEST_SECRET, uniqueName } from '../support/env.ts';
import { answerBody } from '../support/http.ts';
import { type Proc } from '../faults/stack.ts';
import { until } from '../support/until.ts';
import { RoundRobinProxy } from './proxy.ts';

/**
 * The topology of a scaled deployment on one machine: one Temporal server and
 * one database (started by run.ts), a fake SendGrid over real HTTP that posts
 * `processed` events back through the proxy, TWO gateway processes
 * (api/server.ts, AUTH_MODE=api-key) behind a round-robin proxy, and TWO
 * worker processes (worker/worker.ts) polling the same task queue. Both
 * gateways' public base URL is the proxy, so pixel and click links spread
 * over both as they would behind a load balancer.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Signup sends per recipient per hour in the scale stack (small, so the shared count shows). */
export const SIGNUP_LIMIT = 5;

export interface ScaleServers {
  temporalAddress: string;
  mongoUri: string;
  bundlePath: string;
  scratch: string;
}

export interface Answer {
  status: number;
  body: Record<string, unknown>;
  /** Which gateway answered (the proxy's `x-upstream`), -1 when none did. */
  upstream: number;
  ms: number;
}

export interface Gateway extends Proc {
  port: number;
  url: string;
}

export class ScaleStack {
  readonly fake = new FakeSendGrid();
  readonly dbName = uniqueName('scale');
  readonly taskQueue = uniqueName('scale');
  readonly company = randomUUID();
  readonly organization = randomUUID();
  gateways: Gateway[] = [];
  workers: Proc[] = [];
  proxy!: RoundRobinProxy;
  /** A key of `company` with every scope. */
  key = '';
  keyId = '';
  db!: Db;
  private client!: MongoClient;
  private keys!: KeyStore;
  private workerCount = 0;

  constructor(readonly servers: ScaleServers) {}

  get mongoUri(): string {
    const url = new URL(this.servers.mongoUri);
    url.pathname = `/${this.dbName}`;
    return url.toString();
  }

  private env(extra: Record<string, string>): NodeJS.ProcessEnv {
    return {
      PATH: process.env['PATH'],
      HOME: process.env['HOME'],
      MONGODB_URI: this.mongoUri,
      TEMPORAL_ADDRESS: this.servers.temporalAddress,
      TEMPORAL_TASK_QUEUE: this.taskQueue,
      SENDGRID_API_KEY: 'SG.scale-suite',
      SENDGRID_BASE_URL: this.fake.url,
      SENDGRID_WEBHOOK_ALLOW_UNSIGNED: 'true',
      AUTH_MODE: 'api-key',
      MAILROOM_SECRET: TEST_SECRET,
      WORKFLOW_BUNDLE_PATH: this.servers.bundlePath,
      SIGNUP_LINK_ORIGINS: 'https://app.example',
      SIGNUP_LIMIT_PER_RECIPIENT: String(SIGNUP_LIMIT),
      SIGNUP_LIMIT_PER_IP: '1000000',
      LOG_LEVEL: 'warn',
      ...extra,
    };
  }

  async start(): Promise<this> {
    await this.fake.start();
    this.client = new MongoClient(this.servers.mongoUri, { serverSelectionTimeoutMS: 5000 });
    await this.client.connect();
    this.db = this.client.db(this.dbName);
    this.keys = createKeyStore(this.db, createLogger('scale', { logLevel: 'silent', logPretty: false }));
    const created = await this.keys.create({ companyId: this.company, name: 'scale', scopes: SCOPES });
    this.key = created.plaintext;
    this.keyId = created.key.id;
    const ports = [await freePort(), await freePort()];
    this.proxy = await new RoundRobinProxy(ports.map((port) => ({ host: '127.0.0.1', port }))).start();
    this.fake.eventsUrl = `${this.proxy.url}/api/email/webhooks/sendgrid`;
    this.gateways = await Promise.all(ports.map((port, i) => this.startGateway(i, port)));
    this.workers = await Promise.all([this.startWorker(), this.startWorker()]);
    await this.warmUp();
    return this;
  }

  private async startGateway(index: number, port: number): Promise<Gateway> {
    const url = `http://127.0.0.1:${port}`;
    const spawned = await startProcess(`gateway-${index}`, process.execPath, [RUN_TS, 'api/server.ts'], {
      cwd: ROOT,
      env: this.env({ PORT: String(port), PUBLIC_BASE_URL: this.proxy.url }),
      logFile: join(this.servers.scratch, `gateway-${index}.log`),
    });
    await until(`gateway ${index}`, async () => (await fetch(`${url}/health`)).ok, 60_000);
    return { spawned, pid: spawned.child.pid!, port, url };
  }

  /** The gateways' logged errors (level ≥ 50), up to `max`: what a failed case prints to say why. */
  async gatewayErrors(max = 5): Promise<string[]> {
    const lines: string[] = [];
    for (let i = 0; i < this.gateways.length; i++) {
      const log = await readFile(join(this.servers.scratch, `gateway-${i}.log`), 'utf8').catch(() => '');
      for (const line of log.split('\n'))
        if (/"level":(5|6)0/.test(line)) lines.push(`gateway-${i}: ${line.slice(0, 400)}`);
    }
    return lines.slice(0, max);
  }

  async startWorker(): Promise<Proc> {
    const n = this.workerCount++;
    const spawned = await startProcess(`worker-${n}`, process.execPath, [RUN_TS, 'worker/worker.ts'], {
      cwd: ROOT,
      env: this.env({}),
      logFile: join(this.servers.scratch, `worker-${n}.log`),
    });
    return { spawned, pid: spawned.child.pid! };
  }

  /**
   * Back to two gateways and two workers after a case stopped some (the
   * replica-loss case, run again by `SCALE_REPEAT`): each exited process is
   * started again in its place.
   */
  async restore(): Promise<void> {
    const hasExited = (p: Proc) => p.spawned.child.exitCode !== null || p.spawned.child.signalCode !== null;
    this.gateways = await Promise.all(
      this.gateways.map((g, i) => (hasExited(g) ? this.startGateway(i, g.port) : g)),
    );
    this.workers = await Promise.all(this.workers.map((w) => (hasExited(w) ? this.startWorker() : w)));
    await this.warmUp();
  }

  /** Runs until both workers have completed a run (a worker process takes seconds to poll). */
  private async warmUp(): Promise<void> {
    const users = await this.insertUsers('warmup', 8);
    const runIds = await Promise.all(users.map((userId) => this.trigger({ userId })));
    await this.waitForRuns(
      runIds.map((r) => String(r.body['runId'])),
      120_000,
    );
  }

  /**
   * A company of its own with a daily sending limit, as `npm run keys -- quota`
   * sets it, and a key: the identity headers of its requests.
   */
  async companyWithDailyLimit(daily: number): Promise<Record<string, string>> {
    const company = randomUUID();
    const created = await this.keys.create({ companyId: company, name: 'scale-quota', scopes: SCOPES });
    await createDailyQuotas(this.db).setLimit(company, daily);
    return {
      'content-type': 'application/json',
      authorization: `Bearer ${created.plaintext}`,
      'x-company-id': company,
      'x-organization-id': randomUUID(),
      'x-user-id': randomUUID(),
    };
  }

  /** Identity headers matching the key, and the key. */
  headers(extra: Record<string, string> = {}): Record<string, string> {
    return {
      'content-type': 'application/json',
      authorization: `Bearer ${this.key}`,
      'x-company-id': this.company,
      'x-organization-id': this.organization,
      'x-user-id': randomUUID(),
      ...extra,
    };
  }

  /** Through the proxy (or straight to gateway `via`); a request no gateway answered is status 0. */
  async request(
    method: string,
    path: string,
    body?: unknown,
    options: { headers?: Record<string, string>; via?: number; timeoutMs?: number } = {},
  ): Promise<Answer> {
    const started = Date.now();
    const base = options.via === undefined ? this.proxy.url : this.gateways[options.via]!.url;
    try {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: options.headers ?? this.headers(),
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(options.timeoutMs ?? 60_000),
        redirect: 'manual',
      });
      const upstream = Number(res.headers.get('x-upstream') ?? options.via ?? -1);
      return { status: res.status, body: await answerBody(res), upstream, ms: Date.now() - started };
    } catch (err) {
      return { status: 0, body: { error: String(err) }, upstream: -1, ms: Date.now() - started };
    }
  }

  async trigger(input: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Answer> {
    const res = await this.request('POST', '/api/workflow/send-welcome-email', input, {
      headers: this.headers(headers),
    });
    if (res.status !== 202) throw new Error(`trigger answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res;
  }

  /** `count` users named `<prefix>-<i>-<random>`, each with its own address. */
  async insertUsers(prefix: string, count: number): Promise<string[]> {
    const ids = Array.from({ length: count }, (_, i) => `${prefix}-${i}-${randomUUID().slice(0, 8)}`);
    await this.db
      .collection<{ _id: string }>('users')
      .insertMany(ids.map((_id) => ({ _id, email: `${_id}@example.com`, name: `User ${i(_id)}` })));
    return ids;
  }

  /** Polls each run through the proxy until it is completed, failed or cancelled. */
  async waitForRuns(
    runIds: string[],
    timeoutMs: number,
  ): Promise<Map<string, { status: string; error: unknown; result: Record<string, unknown> }>> {
    const done = new Map<string, { status: string; error: unknown; result: Record<string, unknown> }>();
    const deadline = Date.now() + timeoutMs;
    while (done.size < new Set(runIds).size) {
      const open = [...new Set(runIds)].filter((id) => !done.has(id));
      await Promise.all(
        open.map(async (runId) => {
          const res = await this.request(
            'GET',
            `/api/workflow/send-welcome-email?runId=${encodeURIComponent(runId)}`,
          );
          const status = String(res.body['status'] ?? '');
          if (['completed', 'failed', 'cancelled'].includes(status))
            done.set(runId, {
              status,
              error: res.body['error'],
              result: (res.body['result'] ?? {}) as Record<string, unknown>,
            });
        }),
      );
      if (done.size === new Set(runIds).size) break;
      if (Date.now() > deadline)
        throw new Error(`${open.length} of ${runIds.length} runs unfinished after ${timeoutMs / 1000}s`);
      await new Promise((r) => setTimeout(r, 1000));
    }
    return done;
  }

  /** Messages the provider accepted, per recipient, for recipients starting with `prefix`. */
  acceptedFor(prefix: string): Map<string, number> {
    const counts = new Map<string, number>();
    for (const mail of this.fake.accepted) {
      const to = mail.body.personalizations[0]?.to[0]?.email ?? '?';
      if (to.startsWith(prefix)) counts.set(to, (counts.get(to) ?? 0) + 1);
    }
    return counts;
  }

  /** Email records whose recipient starts with `prefix`. */
  async recordsFor(prefix: string) {
    const all = await this.db
      .collection<{ _id: string; recipient_email: string; status_rank: number }>('emails')
      .find({}, { projection: { recipient_email: 1, status_rank: 1, opened: 1, clicked: 1 } })
      .toArray();
    return all.filter((r) => r.recipient_email.startsWith(prefix));
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.workers.map((w) => w.spawned.stop(15_000)));
    await Promise.allSettled(this.gateways.map((g) => g.spawned.stop(15_000)));
    await this.proxy?.stop();
    await this.fake.stop();
    await this.db?.dropDatabase().catch(() => undefined);
    await this.client?.close();
  }
}

const i = (id: string) => id.slice(-8);
