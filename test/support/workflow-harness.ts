/**
 * Test harness for the workflow platform's integration tests
 * (api/routes/workflow/*.test.ts and test/workflows.*.test.ts): a real gateway
 * (createApp + listen(0)) talking to the real Temporal server, the real email
 * core (test/support/email-core.ts), and in-process workers on a task queue of
 * its own.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client, type Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { gatewayTemporalConnection } from '../../api/temporal-deadlines.ts';
import type { Config } from '../../core/config.ts';
import { authenticatedAs } from '../../core/identity.ts';
import type { KeyStore } from '../../core/api-keys/key-store.ts';
import type { Database } from '../../core/db.ts';
import type { EmailService, EmailStatus } from '../../core/email/contract.ts';
import { createApp } from '../../api/app.ts';
import type { RunResponse } from '../../api/routes/workflow/run-schema.ts';
import { createWorker, type MailroomWorker } from '../../worker/create-worker.ts';
import type { Webhooks } from '../../core/webhooks/index.ts';
import type { FakeSendGrid } from './fake-sendgrid.ts';
import { startEmailCore, type EmailCore } from './email-core.ts';
import { mongoUri, temporalAddress, temporalNamespace, TEST_SECRET, uniqueName } from './env.ts';
import { httpClient, type HttpAnswer, type HttpClient } from './http.ts';
import { serve } from './serve.ts';
import { installQuietRuntime, workflowBundle } from './temporal-runtime.ts';
import { RUN_TS } from '../../infra/processes.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export { workflowBundle } from './temporal-runtime.ts';

/** A GET's body, `result.result` typed loosely for assertions. */
export type RunBody = Omit<RunResponse, 'result'> & { result: { result: Record<string, unknown> } | null };

export class WorkflowHarness {
  readonly taskQueue = uniqueName('wf');
  private core!: EmailCore;
  config!: Config;
  database!: Database;
  email!: EmailService;
  keys!: KeyStore;
  webhooks!: Webhooks;
  fake!: FakeSendGrid;
  temporal!: Client;
  baseUrl = '';
  /**
   * Sent as `X-Company-Id` / `X-Organization-Id` / `X-User-Id` with every
   * request (unless a test sets its own): runs belong to this company, and
   * the welcome email is recorded under this user, so tests read it back
   * through the email service's public getStatus like its owner would.
   */
  readonly caller = { companyId: randomUUID(), organizationId: randomUUID(), userId: randomUUID() };
  /** The identity headers every request carries (AUTH_MODE=trusted-headers), unless a test overrides them. */
  readonly identityHeaders = {
    'x-company-id': this.caller.companyId,
    'x-organization-id': this.caller.organizationId,
    'x-user-id': this.caller.userId,
  };
  private connection!: Connection;
  private server!: { url: string; close(): Promise<void> };
  private http!: HttpClient;
  private workers: Array<{ worker: MailroomWorker; running: Promise<void>; connection: NativeConnection }> =
    [];

  async start(env: Record<string, string> = {}): Promise<this> {
    installQuietRuntime();
    this.core = await startEmailCore({
      name: 'wf',
      env: {
        TEMPORAL_ADDRESS: temporalAddress(),
        TEMPORAL_NAMESPACE: temporalNamespace(),
        TEMPORAL_TASK_QUEUE: this.taskQueue,
        AUTH_MODE: 'trusted-headers',
        // In-process workers stop at each file's end: a step a test left at a
        // held provider is cut after 10 s, not production's 40.
        SHUTDOWN_GRACE_SECONDS: '10',
        ...env,
      },
    });
    ({
      config: this.config,
      database: this.database,
      email: this.email,
      fake: this.fake,
      keys: this.keys,
      webhooks: this.webhooks,
    } = this.core);
    // The gateway's own connection (lazy, every RPC under a deadline: api/temporal-deadlines.ts).
    this.connection = gatewayTemporalConnection(temporalAddress());
    this.temporal = new Client({ connection: this.connection, namespace: temporalNamespace() });
    this.core.useTemporal(this.temporal);
    const app = createApp({ ...this.core, db: this.database.db, temporal: this.temporal });
    this.server = await serve(app);
    this.baseUrl = this.server.url;
    this.http = httpClient(this.baseUrl);
    return this;
  }

  /** Starts an in-process worker on this harness's task queue. */
  async startWorker(): Promise<MailroomWorker> {
    const connection = await NativeConnection.connect({ address: temporalAddress() });
    const worker = await createWorker({
      connection,
      taskQueue: this.taskQueue,
      db: this.database.db,
      email: this.email,
      config: this.config,
      webhooks: this.core.webhooks,
      namespace: temporalNamespace(),
      workflowBundleCode: await workflowBundle(),
    });
    const running = worker.run();
    this.workers.push({ worker, running, connection });
    return worker;
  }

  async stopWorkers(): Promise<void> {
    for (const { worker, running, connection } of this.workers.splice(0)) {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running.catch(() => undefined);
      await connection.close();
    }
  }

  async stop(): Promise<void> {
    await this.stopWorkers();
    await this.server?.close();
    await this.connection?.close();
    await this.core?.close();
  }

  /**
   * A worker process (worker/worker.ts, as deployed) serving this harness,
   * for tests that kill it; its output is read and dropped.
   */
  spawnWorkerProcess(overrides: Record<string, string> = {}): ChildProcess {
    const proc = spawn(process.execPath, [RUN_TS, 'worker/worker.ts'], {
      cwd: ROOT,
      env: this.workerProcessEnv(overrides),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    proc.stdout?.resume();
    proc.stderr?.resume();
    return proc;
  }

  /**
   * The environment of a worker process (worker/worker.ts) serving this
   * harness: its task queue, database and fake provider; `overrides` on top.
   */
  workerProcessEnv(overrides: Record<string, string> = {}): NodeJS.ProcessEnv {
    return {
      PATH: process.env['PATH'],
      TEMPORAL_ADDRESS: this.config.temporal.address,
      TEMPORAL_NAMESPACE: this.config.temporal.namespace,
      TEMPORAL_TASK_QUEUE: this.taskQueue,
      MONGODB_URI: this.mongoUriForChild(),
      SENDGRID_API_KEY: 'SG.test-key',
      SENDGRID_BASE_URL: this.fake.url,
      LOG_LEVEL: 'warn',
      MAILROOM_SECRET: TEST_SECRET,
      ...overrides,
    };
  }

  /** MONGODB_URI pointing at this harness's database, for a worker in another process. */
  mongoUriForChild(): string {
    const url = new URL(mongoUri());
    url.pathname = `/${this.database.db.databaseName}`;
    return url.toString();
  }

  /** The Temporal client the webhook outbox hands events to (a dead one: Temporal unreachable). */
  relayTo(client: Client): void {
    this.core.useTemporal(client);
  }

  async insertUser(user: {
    _id: string;
    email: string;
    name?: string;
    welcomeEmailSent?: boolean;
  }): Promise<void> {
    await this.database.db.collection<{ _id: string }>('users').insertOne(user);
  }

  request(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<HttpAnswer> {
    const own = Object.fromEntries(
      Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]),
    );
    return this.http.request(method, path, body, { ...this.identityHeaders, ...own });
  }

  trigger(name: string, body: unknown, headers: Record<string, string> = {}) {
    return this.request('POST', `/api/workflow/${name}`, body, headers);
  }

  /**
   * The email the service recorded for `address` (undefined until there is
   * one), as its status endpoint shows it to `caller` (default: this.caller).
   */
  async emailTo(
    address: string,
    caller: { userId?: string; companyId?: string; organizationId?: string } = this.caller,
  ): Promise<EmailStatus | undefined> {
    const record = await this.database.db
      .collection<{ email_id: string }>('emails')
      .findOne({ recipient_email: address }, { projection: { email_id: 1 } });
    return record ? this.email.getStatus(record.email_id, authenticatedAs(caller)) : undefined;
  }

  async status(
    name: string,
    runId: string,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: RunBody }> {
    const res = await this.request(
      'GET',
      `/api/workflow/${name}?runId=${encodeURIComponent(runId)}`,
      undefined,
      headers,
    );
    return res as unknown as { status: number; body: RunBody };
  }

  /** Polls GET like a client would (every 200 ms here) until the run reaches `status`. */
  async waitForStatus(
    name: string,
    runId: string,
    status: string,
    timeoutMs = 20_000,
    headers: Record<string, string> = {},
  ): Promise<RunBody> {
    const deadline = Date.now() + timeoutMs;
    let last: RunBody | undefined;
    while (Date.now() < deadline) {
      const res = await this.status(name, runId, headers);
      last = res.body;
      if (res.status === 200 && res.body.status === status) return res.body;
      if (res.status === 200 && ['completed', 'failed', 'cancelled'].includes(res.body.status)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`run ${runId} did not reach '${status}'; last: ${JSON.stringify(last)}`);
  }
}
