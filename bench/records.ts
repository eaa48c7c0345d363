import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Db } from 'mongodb';
import { pino } from 'pino';
import { sweepStuckPending } from '../core/email/records/sweeper.ts';
import { createSuppressionStore } from '../core/email/suppressions/suppression-store.ts';
import { createRecordStore } from '../core/email/records/record-store.ts';
import type { EmailRecord } from '../core/email/records/record.ts';
import { freePort } from '../infra/processes.ts';
import { startBenchEnv, type BenchEnv } from './env.ts';
import { httpRatio, type HttpSide } from './lib/http-pair.ts';
import type { Generator, LoadResult } from './lib/load.ts';
import { combineCpu } from './lib/load.ts';
import { combine, table, throughputRatio, type Ratio } from './lib/measure.ts';
import { waitForHttp } from './lib/processes.ts';
import { alternatingRounds } from './lib/rounds.ts';
import { fillRecords, grownRecord, type FillResult } from './records-fill.ts';
import { recordedAfterEachMeasurement } from './lib/opens.ts';
import { EVENTS_PER_REQUEST, webhookBodies, webhookLoad } from './records-webhook.ts';
import { invoiceBody } from '../test/support/sample-emails.ts';

/**
 * `BENCH_RECORDS=<n> npm run bench`: does the speed hold once the database
 * has grown? Fills a database of its own with `n` records and what grows
 * beside them (bench/records-fill.ts), then measures send, status, pixel and
 * the provider webhook on it, each against the same path on an empty
 * database in the same run: two identical gateways on the same FerretDB (or
 * MongoDB), one per database, loaded in alternating rounds exactly like a
 * path and its floor (lib/http-pair.ts). Prints, per path, exactly
 * `ratio records_<path> <large ÷ empty throughput> target 0.85 …` (recordsLine),
 * and the time of one sweeper pass on each database (`records sweep_pass …`).
 */
export const RECORDS_TARGET = 0.85;
const sizesOf = (quick: boolean) =>
  quick
    ? { rounds: 1, seconds: 1, warmupSeconds: 1, poolSize: 300, webhookBodies: 20 }
    : { rounds: 4, seconds: 3, warmupSeconds: 5, poolSize: 1000, webhookBodies: 200 };

/** Below this the "large" database is not large; the quick run may go down to it. */
const RECORDS_MIN = 10_000;

/** The measurements' own records: the status pool, a pixel pool per measurement, the webhook's records. */
const sampleNeeded = (quick: boolean) => {
  const sizes = sizesOf(quick);
  return sizes.poolSize * (sizes.rounds + 2) + EVENTS_PER_REQUEST * sizes.webhookBodies;
};

/**
 * The smallest `n` a run can measure: the sample is at most every other
 * record (the rest are other companies'), so twice the sample, and never
 * below RECORDS_MIN. 10,000 for the quick run, 22,000 for a full one.
 */
export const recordsMinimum = (quick: boolean) => Math.max(RECORDS_MIN, 2 * sampleNeeded(quick));

export interface RecordsOptions {
  n: number;
  quick: boolean;
  only: ReadonlySet<string>;
  generator: Generator;
  log: (line: string) => void;
}

/** `BENCH_RECORDS`: a whole number ≥ recordsMinimum (`1e6` and `1_000_000` accepted); anything else throws. */
export function parseRecordsCount(raw: string, quick: boolean): number {
  const n = Number(raw.replaceAll('_', ''));
  const min = recordsMinimum(quick);
  if (!Number.isSafeInteger(n) || n < min)
    throw new Error(
      `BENCH_RECORDS takes a whole number of at least ${min}${quick ? '' : ' for a full run (10000 with BENCH_QUICK=1)'}, not ${JSON.stringify(raw)}`,
    );
  return n;
}

/**
 * The machine-readable line: `ratio records_<path> <at size ÷ empty> target 0.85`
 * (the main bench's shape), then both throughputs it divides.
 */
export const recordsLine = (n: number, r: Ratio): string =>
  `ratio records_${r.name} ${r.value.toFixed(3)} target ${r.target} at_size ${r.ours.ops.toFixed(1)}/s empty ${r.floor.ops.toFixed(1)}/s records ${n}`;

export async function runRecords(opts: RecordsOptions): Promise<Ratio[]> {
  const { log, n } = opts;
  const sizes = sizesOf(opts.quick);
  const wanted = (path: string) => opts.only.size === 0 || opts.only.has(path);
  const env = await startBenchEnv(log, opts.generator);
  const largeName = `${env.database.db.databaseName}_records`;
  const large = env.database.client.db(largeName);
  try {
    const company = randomUUID();
    const needed = sampleNeeded(opts.quick);
    const every = Math.max(2, Math.floor(n / needed));
    log(`filling ${largeName} with ${n} records (every ${every}th one the measurements' own) …`);
    const fill = await fillRecords(large, n, log, { sample: { companyId: company, every } });
    log(fillSummary(fill));
    const empty = env.database.db;
    const emptySample = await seedSample(empty, company, fill.sample.length);

    const gatewayEnv = { SENDGRID_WEBHOOK_ALLOW_UNSIGNED: 'true' };
    const gateways = {
      empty: await startGateway(env, 'gateway-empty', env.mongoUri, gatewayEnv),
      large: await startGateway(env, 'gateway-large', uriOf(env.mongoUri, largeName), gatewayEnv),
    };
    const samples = { empty: emptySample, large: fill.sample };
    const slice = (side: 'empty' | 'large', from: number, count: number) =>
      samples[side].slice(from, from + count);
    const pool = sizes.poolSize;
    const ratios: Ratio[] = [];
    const pair = (name: string, side: (which: 'empty' | 'large') => HttpSide) =>
      httpRatio(
        env,
        { name, target: RECORDS_TARGET },
        { ...sizes, services: { FerretDB: env.servicePids.ferretdb } },
        side('empty'),
        side('large'),
      );
    const step = async (name: string, fn: () => Promise<Ratio>) => {
      if (!wanted(name)) return;
      const t0 = performance.now();
      log(`records ${name} …`);
      const ratio = await fn();
      ratios.push(ratio);
      // At once too: a path that fails later (hours into a large run) does not take these figures with it.
      log(
        `records ${name} done in ${((performance.now() - t0) / 1000).toFixed(1)}s: ${recordsLine(n, ratio)}`,
      );
    };

    await step('send', () => {
      const body = JSON.stringify(invoiceBody());
      const headers = tenant(company);
      return pair('send', (which) => ({
        name: `POST /api/email/send, ${label(which, n)}`,
        pid: gateways[which].pid,
        load: () => ({
          baseUrl: gateways[which].url,
          method: 'POST',
          paths: ['/api/email/send'],
          headers,
          body,
          expectStatus: 200,
          connections: 10,
        }),
      }));
    });

    await step('status', () =>
      pair('status', (which) => ({
        name: `GET /api/email/status/{id}, ${label(which, n)}`,
        pid: gateways[which].pid,
        load: () => ({
          baseUrl: gateways[which].url,
          method: 'GET',
          paths: slice(which, 0, pool).map((r) => `/api/email/status/${r._id}`),
          headers: tenant(company),
          expectStatus: 200,
          connections: 20,
        }),
      })),
    );

    await step('pixel', async () => {
      const pools = (which: 'empty' | 'large') =>
        Array.from({ length: sizes.rounds + 1 }, (_, p) => slice(which, pool * (p + 1), pool));
      const checks = {
        empty: recordedAfterEachMeasurement(empty, pools('empty'), 'opened', 20, { readEach: true }),
        large: recordedAfterEachMeasurement(large, pools('large'), 'opened', 20, { readEach: true }),
      };
      const ratio = await pair('pixel', (which) => ({
        name: `GET /api/email/track, ${label(which, n)}`,
        pid: gateways[which].pid,
        load: (round) => ({
          baseUrl: gateways[which].url,
          method: 'GET',
          paths: pools(which)[round + 1]!.map(
            (r) => `/api/email/track?view_key=${encodeURIComponent(r.view_key)}`,
          ),
          expectStatus: 200,
          connections: 20,
        }),
        after: checks[which].after,
      }));
      const recorded = checks.empty.totals.records + checks.large.totals.records;
      ratio.note += `; all ${recorded} opens checked in the databases by _id`;
      return ratio;
    });

    await step('webhook', async () => {
      const from = pool * (sizes.rounds + 2);
      const bodies = {
        empty: webhookBodies(slice('empty', from, EVENTS_PER_REQUEST * sizes.webhookBodies)),
        large: webhookBodies(slice('large', from, EVENTS_PER_REQUEST * sizes.webhookBodies)),
      };
      const measureSide = (which: 'empty' | 'large', seconds: number) =>
        webhookLoad({
          url: `${gateways[which].url}/api/email/webhooks/sendgrid`,
          bodies: bodies[which],
          connections: 4,
          seconds,
          serverPid: gateways[which].pid,
          name: `POST /api/email/webhooks/sendgrid (${EVENTS_PER_REQUEST} events), ${label(which, n)}`,
        });
      await measureSide('empty', sizes.warmupSeconds);
      await measureSide('large', sizes.warmupSeconds);
      const rounds = await alternatingRounds(
        sizes.rounds,
        [env.servicePids.ferretdb, gateways.empty.pid, gateways.large.pid],
        { floor: () => measureSide('empty', sizes.seconds), ours: () => measureSide('large', sizes.seconds) },
      );
      return pairRatio('webhook', rounds);
    });

    const sweep = { empty: await sweepPass(empty), large: await sweepPass(large) };
    const listing = { empty: await listingPage(empty, company), large: await listingPage(large, company) };
    console.log(`\n${table(ratios)}`);
    console.log('');
    for (const r of ratios) console.log(recordsLine(n, r));
    console.log(
      `records sweep_pass ${n} at_size ${sweep.large.seconds.toFixed(3)} s (${sweep.large.swept} swept of ${fill.stuck} stuck) empty ${sweep.empty.seconds.toFixed(3)} s`,
    );
    console.log(
      `records suppression_page ${n} at_size ${listing.large.toFixed(3)} s (${fill.suppressions} suppressions) empty ${listing.empty.toFixed(3)} s`,
    );
    return ratios;
  } finally {
    await large.dropDatabase().catch(() => undefined);
    await env.close();
  }
}

/** Our throughput ÷ the empty database's, from alternating rounds (lib/http-pair.ts does the same for wrk loads). */
function pairRatio(name: string, rounds: { floor: LoadResult[]; ours: LoadResult[] }): Ratio {
  const ratio = throughputRatio(
    name,
    RECORDS_TARGET,
    combine(
      rounds.ours[0]!.figures.name,
      rounds.ours.map((r) => r.figures),
    ),
    combine(
      rounds.floor[0]!.figures.name,
      rounds.floor.map((r) => r.figures),
    ),
  );
  ratio.load = {
    ours: combineCpu(rounds.ours.map((r) => r.cpu)),
    floor: combineCpu(rounds.floor.map((r) => r.cpu)),
  };
  const byRound = rounds.ours.map((o, i) => (o.figures.ops / rounds.floor[i]!.figures.ops).toFixed(2));
  ratio.note = `by round ${byRound.join(', ')}`;
  return ratio;
}

const label = (which: 'empty' | 'large', n: number) => (which === 'empty' ? 'empty db' : `${n} records`);

/** The identity headers of the sample's company (AUTH_MODE trusted-headers). */
const tenant = (company: string): Record<string, string> => ({
  'content-type': 'application/json',
  'x-company-id': company,
  'x-organization-id': company,
  'x-user-id': randomUUID(),
});

function uriOf(uri: string, dbName: string): string {
  const url = new URL(uri);
  url.pathname = `/${dbName}`;
  return url.toString();
}

async function startGateway(env: BenchEnv, name: string, mongoUri: string, extra: NodeJS.ProcessEnv) {
  const port = await freePort();
  const proc = await env.start(name, 'api/server.ts', {
    ...extra,
    MONGODB_URI: mongoUri,
    PORT: String(port),
  });
  const url = `http://127.0.0.1:${port}`;
  // The large database's gateway builds its indexes over the filled collections first.
  await waitForHttp(proc, `${url}/health`, 600_000);
  return { pid: proc.pid, url };
}

/** The empty database gets records like the sample (the same count, the same company), and nothing else. */
async function seedSample(db: Db, company: string, count: number): Promise<EmailRecord[]> {
  const records = Array.from({ length: count }, (_, i) =>
    grownRecord(company, i, (count - i) * 60_000, Math.random, 'delivered'),
  );
  for (let i = 0; i < records.length; i += 1000)
    await db.collection<EmailRecord>('emails').insertMany(records.slice(i, i + 1000));
  return records;
}

/** One pass of the worker's sweeper (stuck pending records failed, at most a batch), timed. */
async function sweepPass(db: Db): Promise<{ seconds: number; swept: number }> {
  const t0 = performance.now();
  const swept = await sweepStuckPending(createRecordStore(db), pino({ level: 'silent' }));
  return { seconds: (performance.now() - t0) / 1000, swept: swept.length };
}

/** One page (100) of a company's suppression list, as `GET /api/suppressions` reads it, timed. */
async function listingPage(db: Db, company: string): Promise<number> {
  const t0 = performance.now();
  await createSuppressionStore(db).list(company, { limit: 100 });
  return (performance.now() - t0) / 1000;
}

function fillSummary(f: FillResult): string {
  return `filled ${f.records} records of ${f.companies} companies (${f.stuck} stuck pending), ${f.suppressions} suppressions, ${f.stepKeys} step keys, ${f.requests} request keys in ${f.seconds.toFixed(1)} s (${(f.records / f.seconds).toFixed(0)} records/s)`;
}
