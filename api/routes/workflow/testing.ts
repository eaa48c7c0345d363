/**
 * Test harness for the workflow platform's integration tests (routes beside
 * this file and test/workflows.*.test.ts): a real gateway (createApp +
 * listen(0)) talking to the real Temporal server, the real email core over a
 * unique database, a fake SendGrid over real HTTP, and in-process workers on a
 * task queue of its own. Not imported by production code.
 */
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import {
  DefaultLogger,
  NativeConnection,
  Runtime,
  bundleWorkflowCode,
  type Worker,
} from '@temporalio/worker';
import { loadConfig, type Config } from '../../../core/config.ts';
import { connectDatabase, type Database } from '../../../core/db.ts';
import { createLogger } from '../../../core/logger.ts';
import type { EmailService, EmailStatus } from '../../../core/email/contract.ts';
import { createEmailService } from '../../../core/email/service.ts';
import { createApp } from '../../app.ts';
import { createWorker, WORKFLOWS_PATH } from '../../../worker/create-worker.ts';
import { FakeSendGrid } from '../../../test/support/fake-sendgrid.ts';
import { mongoUri, temporalAddress, temporalNamespace, uniqueName } from '../../../test/support/env.ts';

export interface RunBody {
  success: boolean;
  runId: string;
  workflowName: string;
  status: string;
  result: { result: Record<string, unknown> } | null;
  error: string | null;
  createdAt: string;
  updatedAt: string;
}

let bundle: Promise<string> | undefined;
/** One webpack bundle per test process, shared by every worker it starts. */
export function workflowBundle(): Promise<string> {
  bundle ??= bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietLogger }).then((b) => b.code);
  return bundle;
}

const noop = () => undefined;
const quietLogger = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: noop };

let runtimeInstalled = false;
/** Workers log through the process-wide Runtime; tests want warnings only. */
function installQuietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  Runtime.install({
    logger: new DefaultLogger(process.env['TEST_WORKER_LOG_LEVEL'] === 'debug' ? 'DEBUG' : 'ERROR'),
  });
}

export class WorkflowHarness {
  readonly fake = new FakeSendGrid();
  readonly taskQueue = uniqueName('wf');
  config!: Config;
  database!: Database;
  email!: EmailService;
  temporal!: Client;
  baseUrl = '';
  /**
   * Sent as `X-User-Id` with every trigger (unless a test sets its own): the
   * welcome email is then recorded under this user, so tests read it back
   * through the email service's public getStatus like its owner would.
   */
  readonly caller = { userId: randomUUID() };
  /** This harness's own database (dropped in stop()). */
  readonly dbName = uniqueName('wf');
  private connection!: Connection;
  private server!: Server;
  private workers: Array<{ worker: Worker; running: Promise<void>; connection: NativeConnection }> = [];

  async start(env: Record<string, string> = {}): Promise<this> {
    installQuietRuntime();
    await this.fake.start();
    this.config = loadConfig({
      MONGODB_URI: mongoUri(),
      TEMPORAL_ADDRESS: temporalAddress(),
      TEMPORAL_NAMESPACE: temporalNamespace(),
      TEMPORAL_TASK_QUEUE: this.taskQueue,
      SENDGRID_API_KEY: 'SG.test-key',
      SENDGRID_BASE_URL: this.fake.url,
      LOG_LEVEL: 'silent',
      ...env,
    });
    this.database = await connectDatabase(mongoUri(), this.dbName);
    const logger = createLogger('test', 'silent');
    this.email = createEmailService({ db: this.database.db, config: this.config, logger });
    await this.email.ensureIndexes();
    this.connection = await Connection.connect({ address: temporalAddress() });
    this.temporal = new Client({ connection: this.connection, namespace: temporalNamespace() });
    const app = createApp({
      config: this.config,
      logger,
      db: this.database.db,
      temporal: this.temporal,
      email: this.email,
    });
    this.server = app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => this.server.once('listening', () => resolve()));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** Starts an in-process worker on this harness's task queue. */
  async startWorker(): Promise<Worker> {
    const connection = await NativeConnection.connect({ address: temporalAddress() });
    const worker = await createWorker({
      connection,
      taskQueue: this.taskQueue,
      db: this.database.db,
      email: this.email,
      config: this.config,
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
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    await this.connection?.close();
    await this.database?.db.dropDatabase().catch(() => undefined);
    await this.database?.close();
    await this.fake.stop();
  }

  /** MONGODB_URI pointing at this harness's database, for a worker in another process. */
  mongoUriForChild(): string {
    const url = new URL(mongoUri());
    url.pathname = `/${this.dbName}`;
    return url.toString();
  }

  async insertUser(user: {
    _id: string;
    email: string;
    name?: string;
    welcomeEmailSent?: boolean;
  }): Promise<void> {
    await this.database.db.collection<{ _id: string }>('users').insertOne(user);
  }

  async request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  trigger(name: string, body: unknown, headers: Record<string, string> = {}) {
    return this.request('POST', `/api/workflow/${name}`, body, {
      'X-User-Id': this.caller.userId,
      ...headers,
    });
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
    return record ? this.email.getStatus(record.email_id, caller) : undefined;
  }

  async status(name: string, runId: string): Promise<{ status: number; body: RunBody }> {
    const res = await this.request('GET', `/api/workflow/${name}?runId=${encodeURIComponent(runId)}`);
    return res as unknown as { status: number; body: RunBody };
  }

  /** Polls GET like a client would (every 200 ms here) until the run reaches `status`. */
  async waitForStatus(name: string, runId: string, status: string, timeoutMs = 20_000): Promise<RunBody> {
    const deadline = Date.now() + timeoutMs;
    let last: RunBody | undefined;
    while (Date.now() < deadline) {
      const res = await this.status(name, runId);
      last = res.body;
      if (res.status === 200 && res.body.status === status) return res.body;
      if (res.status === 200 && ['completed', 'failed', 'cancelled'].includes(res.body.status)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`run ${runId} did not reach '${status}'; last: ${JSON.stringify(last)}`);
  }
}
