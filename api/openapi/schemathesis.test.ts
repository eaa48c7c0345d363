import { spawn } from 'node:child_process';
import { gatewayTemporalConnection } from '../temporal-deadlines.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Connection } from '@temporalio/client';
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { SCOPES } from '../../core/identity.ts';
import { SendEmailReceivedEinInput } from '../../core/workflows/send-email-received-ein.input.ts';
import { MailroomError } from '../../core/errors.ts';
import { attachmentFetchFailed } from '../../core/email/email-messages.ts';
import { ensureSchemathesis, SCHEMATHESIS_VERSION } from '../../infra/provision.ts';
import { startEmailCore, type EmailCore } from '../../test/support/email-core.ts';
import { temporalAddress, temporalNamespace, uniqueName } from '../../test/support/env.ts';
import { serve } from '../../test/support/serve.ts';
import { installQuietRuntime, workflowBundle } from '../../test/support/temporal-runtime.ts';
import { createWorker, type MailroomWorker } from '../../worker/create-worker.ts';
import { createApp } from '../app.ts';

/**
 * schemathesis (PyPI, pinned in infra/provision.ts) fuzzes a real gateway
 * (real MongoDB, real Temporal, SendGrid faked over HTTP) from its own
 * /openapi.json: every operation, with generated valid and invalid requests,
 * checking that nothing answers 5xx and that every answer matches the
 * document's schema for its status. Installed on first use (pip, into the
 * cache); a machine without python3 fails here, it never skips.
 *
 * Bounded: a few examples per operation and a fixed seed, so a run takes
 * about a minute and a failure reproduces (SCHEMATHESIS_SEED and
 * SCHEMATHESIS_MAX_EXAMPLES override both).
 */

const MAX_EXAMPLES = process.env['SCHEMATHESIS_MAX_EXAMPLES'] ?? '10';
const SEED = process.env['SCHEMATHESIS_SEED'] ?? '20261123';
/**
 * The caller the fuzzer is: the identity of the EIN input's example, so that
 * example is the caller's own (another company's ids are 403 by design).
 */
const EIN_EXAMPLE = (SendEmailReceivedEinInput as { examples?: Array<Record<string, string>> }).examples![0]!;
const IDENTITY = {
  'X-Company-Id': EIN_EXAMPLE['companyId']!,
  'X-Organization-Id': EIN_EXAMPLE['organizationId']!,
  'X-User-Id': EIN_EXAMPLE['userId']!,
};

describe(`schemathesis ${SCHEMATHESIS_VERSION} against /openapi.json`, () => {
  let core: EmailCore;
  let connection: Connection;
  let server: { url: string; close(): Promise<void> };
  let reports: string;
  let apiKey = '';
  let worker: { worker: MailroomWorker; running: Promise<void>; connection: NativeConnection } | undefined;

  before(async () => {
    core = await startEmailCore({
      name: 'fuzz',
      // The fuzzer invents attachment URLs: refuse them all, as the real fetcher
      // refuses an address it may not reach, instead of fetching from the internet.
      service: {
        fetchAttachment: () =>
          Promise.reject(new MailroomError('validation', attachmentFetchFailed('address not allowed'))),
      },
      env: {
        // Production's mode: the fuzzer calls with a key of every scope (below).
        AUTH_MODE: 'api-key',
        TEMPORAL_ADDRESS: temporalAddress(),
        TEMPORAL_NAMESPACE: temporalNamespace(),
        // A worker of its own runs what the fuzzer starts, so a GET with `wait`
        // (up to 60 s) answers when the run ends, within the request timeout.
        TEMPORAL_TASK_QUEUE: uniqueName('fuzz'),
        // Let fuzzed events reach the event handling instead of stopping at the signature.
        SENDGRID_WEBHOOK_ALLOW_UNSIGNED: 'true',
      },
    });
    apiKey = (
      await core.keys.create({
        companyId: IDENTITY['X-Company-Id'],
        organizationId: IDENTITY['X-Organization-Id'],
        name: 'schemathesis',
        scopes: SCOPES,
      })
    ).plaintext;
    connection = gatewayTemporalConnection(temporalAddress());
    const temporal = new Client({ connection, namespace: temporalNamespace() });
    installQuietRuntime();
    const workerConnection = await NativeConnection.connect({ address: temporalAddress() });
    const running = await createWorker({
      connection: workerConnection,
      taskQueue: core.config.temporal.taskQueue,
      db: core.database.db,
      email: core.email,
      config: core.config,
      webhooks: core.webhooks,
      namespace: temporalNamespace(),
      workflowBundleCode: await workflowBundle(),
    });
    worker = { worker: running, running: running.run(), connection: workerConnection };
    core.useTemporal(temporal);
    server = await serve(createApp({ ...core, db: core.database.db, temporal }));
    reports = await mkdtemp(join(tmpdir(), 'mailroom-schemathesis-'));
  });

  after(async () => {
    if (worker) {
      worker.worker.shutdown();
      await worker.running.catch(() => undefined);
      await worker.connection.close();
    }
    await server?.close();
    await connection?.close();
    await core?.close();
    if (reports) await rm(reports, { recursive: true, force: true });
  });

  it(
    'finds no server error, no answer off its schema and no undocumented status, in every operation',
    { timeout: 10 * 60_000 },
    async () => {
      const tool = await ensureSchemathesis((line) => console.log(`[schemathesis] ${line}`));
      const args = [
        ...tool.args,
        'run',
        `${server.url}/openapi.json`,
        '--checks',
        // Every answer's status is one its operation documents, as a generated client expects.
        'not_a_server_error,response_schema_conformance,status_code_conformance',
        '--max-examples',
        MAX_EXAMPLES,
        '--seed',
        SEED,
        // One worker: gentler on a 2-core machine running other tests, and clear of
        // CPython 3.11's race when two threads import the same module at once
        // ("AST constructor recursion depth mismatch").
        '--workers',
        '1',
        '--request-timeout',
        '30',
        // A caller with a key and a full identity, so sends and reads get past authorisation
        // and the stateful phase can read back what it sent or started (links).
        ...Object.entries(IDENTITY).flatMap(([name, value]) => ['-H', `${name}: ${value}`]),
        '-H',
        `Authorization: Bearer ${apiKey}`,
        '--report',
        'ndjson',
        '--report-dir',
        reports,
      ];
      // Run from the scratch directory: schemathesis keeps a `.schemathesis/` cache in its working directory.
      const { code, output } = await run(tool.command, args, reports, {
        ...process.env,
        ...tool.env,
        NO_COLOR: '1',
      });
      // The figures (operations, test cases, phases) go to the test log either way.
      const warnings = output.lastIndexOf('= WARNINGS =');
      const tail = warnings >= 0 ? warnings : output.lastIndexOf('= SUMMARY =');
      console.log(output.slice(tail).trim());
      assert.equal(code, 0, `schemathesis ${args.slice(tool.args.length).join(' ')} failed:\n${output}`);
      // Every operation of the document was exercised (none skipped as unreachable).
      const summary = /(?<!\d)(\d+) (?:selected|total)/.exec(output);
      assert.ok(summary, `no operation count in schemathesis' output:\n${output}`);
      assert.doesNotMatch(output, /\b[1-9]\d* (?:failed|errored)\b/, output);
    },
  );
});

function run(
  command: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}
