import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { AddressInfo } from 'node:net';
import { randomBytes, randomUUID } from 'node:crypto';
import { MailService } from '@sendgrid/mail';
import { Client as SendGridClient } from '@sendgrid/client';
import { Client, Connection } from '@temporalio/client';
import { createApp } from '../api/app.ts';
import { loadConfig } from '../core/config.ts';
import { keyStore } from '../core/api-keys/key-store.ts';
import { connectDatabase } from '../core/db.ts';
import { createLogger } from '../core/logger.ts';
import { createEmailService } from '../core/email/service.ts';
import { renderEmail } from '../templates/engine.ts';
import { ensureFerretDb } from '../infra/provision.ts';
import { freePort, startMongo, type MongoHandle } from '../infra/services.ts';
import { FakeSendGrid } from '../infra/fake-sendgrid.ts';
import { invoiceBody } from '../test/support/sample-emails.ts';

/**
 * `npm run bench`: what one send costs, against baselines measured in the same
 * run on the same machine, so the figures compare like with like:
 *
 *   provider only   @sendgrid/mail → fake SendGrid (the floor: one HTTP round trip)
 *   storage only    insert + update of a record in MongoDB/FerretDB
 *   mailroom send   POST /api/email/send through the gateway: validate, record,
 *                   render, deliver, record again
 *   render          one template render (CPU only), for scale
 *
 * BENCH_N (default 400) requests per measurement, BENCH_CONCURRENCY (default 10).
 * MONGODB_URI, when set, is used instead of starting the embedded server.
 */

const N = Number(process.env['BENCH_N'] ?? 400);
const CONCURRENCY = Number(process.env['BENCH_CONCURRENCY'] ?? 10);

interface Figures {
  name: string;
  ops: number;
  seconds: number;
  p50: number;
  p95: number;
  p99: number;
}

async function measure(name: string, count: number, concurrency: number, op: (i: number) => Promise<void>) {
  // Warm-up: JIT, connection pools, index pages.
  for (let i = 0; i < Math.min(20, count); i++) await op(-1 - i);
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        const t0 = performance.now();
        await op(i);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return {
    name,
    ops: count / seconds,
    seconds,
    p50: at(0.5),
    p95: at(0.95),
    p99: at(0.99),
  } satisfies Figures;
}

function print(rows: Figures[], baseline: Figures): void {
  const pad = (s: string, n: number) => s.padEnd(n);
  const num = (v: number, d = 1) => v.toFixed(d).padStart(9);
  console.log(
    `\n${pad('measurement', 34)}${'ops/s'.padStart(9)}${'p50 ms'.padStart(9)}${'p95 ms'.padStart(9)}${'p99 ms'.padStart(9)}   vs ${baseline.name}`,
  );
  for (const r of rows) {
    const ratio = r === baseline ? 'baseline' : `${(baseline.ops / r.ops).toFixed(2)}x the time per op`;
    console.log(
      `${pad(r.name, 34)}${num(r.ops, 0)}${num(r.p50, 2)}${num(r.p95, 2)}${num(r.p99, 2)}   ${ratio}`,
    );
  }
}

async function main(): Promise<void> {
  let mongo: MongoHandle | undefined;
  let scratch: string | undefined;
  let uri = process.env['MONGODB_URI'];
  if (!uri) {
    const binary = await ensureFerretDb((line) => console.log(`[bench] ${line}`));
    scratch = await mkdtemp(join(tmpdir(), 'mailroom-bench-'));
    mongo = await startMongo({
      binary,
      port: await freePort(),
      dataDir: join(scratch, 'mongo'),
      logFile: join(scratch, 'mongo.log'),
    });
    uri = `${mongo.uri}/mailroom`;
  }
  const fake = await new FakeSendGrid().start();
  const database = await connectDatabase(uri, `bench_${randomUUID().slice(0, 8)}`);
  try {
    const config = loadConfig({
      SENDGRID_API_KEY: 'SG.bench',
      SENDGRID_BASE_URL: fake.url,
      PUBLIC_BASE_URL: 'http://mailroom.bench',
      MAILROOM_SECRET: randomBytes(32).toString('hex'),
    });
    const logger = createLogger('bench', { logLevel: 'silent', logPretty: false });
    const email = createEmailService({ db: database.db, config, logger });
    await email.ensureIndexes();
    const temporal = new Client({ connection: Connection.lazy({ address: '127.0.0.1:1' }) });
    const server = createApp({
      config,
      logger,
      db: database.db,
      temporal,
      email,
      keys: keyStore(database.db, logger),
    }).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const gateway = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    console.log(`[bench] N=${N} concurrency=${CONCURRENCY}; MongoDB ${uri}; fake SendGrid ${fake.url}`);

    // The same invoice the tests send (test/support/sample-emails.ts).
    const sendBody = invoiceBody();
    const data = sendBody['template_data'] as Record<string, string>;
    const auth = {
      'content-type': 'application/json',
      'x-company-id': randomUUID(),
      'x-organization-id': randomUUID(),
      'x-user-id': randomUUID(),
    };
    const rendered = renderEmail({
      templateId: 'invoice',
      data,
      subject: 'Invoice INV-1',
      trackingPixelUrl: 'http://x/p',
    });

    // Provider floor: the real client, the same fake, the same message size.
    const sgClient = new SendGridClient();
    sgClient.setApiKey('SG.bench');
    sgClient.setDefaultRequest('baseUrl', fake.url);
    const mail = new MailService();
    mail.setClient(sgClient);
    const provider = await measure('provider only (@sendgrid/mail)', N, CONCURRENCY, async () => {
      await mail.send({
        to: 'customer@example.com',
        from: 'no-reply@mailroom.bench',
        subject: 'Invoice INV-1',
        html: rendered.html,
        text: rendered.text,
        customArgs: { email_id: randomUUID() },
      });
    });

    const scratchCollection = database.db.collection<{
      _id: string;
      status_rank: number;
      subject: string;
      created_at: Date;
      provider_id?: string;
    }>('bench_storage');
    const storage = await measure('storage only (insert + update)', N, CONCURRENCY, async () => {
      const _id = randomUUID();
      await scratchCollection.insertOne({
        _id,
        status_rank: 0,
        subject: 'Invoice INV-1',
        created_at: new Date(),
      });
      await scratchCollection.updateOne({ _id }, { $max: { status_rank: 1 }, $set: { provider_id: 'x' } });
    });

    const send = await measure('mailroom POST /api/email/send', N, CONCURRENCY, async () => {
      const res = await fetch(`${gateway}/api/email/send`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify(sendBody),
      });
      if (res.status !== 200) throw new Error(`send answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    });
    // CPU cost of one render (compiled templates are cached), for scale against the I/O above.
    const render = await measure('render invoice (html + text)', N * 10, 1, async () => {
      renderEmail({ templateId: 'invoice', data, subject: 'Invoice INV-1', trackingPixelUrl: 'http://x/p' });
    });
    print([provider, storage, send, render], provider);
    console.log(`\n[bench] fake SendGrid accepted ${fake.accepted.length} messages`);

    server.closeAllConnections();
    server.close();
    await database.db.dropDatabase();
  } finally {
    await database.close();
    await fake.stop();
    await mongo?.stop();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }
}

await main();
