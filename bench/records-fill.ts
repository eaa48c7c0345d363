import { randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Collection, Db, Document } from 'mongodb';
import { IN_FLIGHT_COLLECTION } from '../core/email/records/in-flight.ts';
import { STATUS_RANK, type EmailRecord } from '../core/email/records/record.ts';
import type { SuppressionDoc } from '../core/email/suppressions/suppression-store.ts';
import { newViewKey } from '../core/email/tracking/view-key.ts';

/**
 * A database that has grown (`BENCH_RECORDS=<n>`, bench/records.ts): `n`
 * email records as a year of sends leaves them, spread over many companies,
 * with what grows beside them: suppressions (a hard bounce or a spam report
 * of some of them), workflow steps' idempotency keys, a day's
 * `Idempotency-Key` requests, and a few records left pending (with their
 * in-flight entries) for the sweeper. Written with `insertMany` in batches of
 * FILL_BATCH, several batches in flight.
 *
 * FILL_BATCH and FILL_IN_FLIGHT were measured on FerretDB 1.24 (SQLite) on the
 * bench machine (2 cores): see docs/benchmarks.md, "A database that has grown".
 */
export const FILL_BATCH = 1000;
export const FILL_IN_FLIGHT = Number(process.env['FILL_IN_FLIGHT'] ?? 2);

/** Records per company: a mid-size customer's year; at least 10 companies. */
const RECORDS_PER_COMPANY = 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

/** How a year of sends ends up, in shares of all records (the rest: delivered). */
const OUTCOMES: ReadonlyArray<{ share: number; status: keyof typeof STATUS_RANK }> = [
  { share: 0.35, status: 'opened' },
  { share: 0.05, status: 'sent' },
  { share: 0.03, status: 'bounced' },
  { share: 0.02, status: 'failed' },
  // Left pending by a crash mid-send: what the sweeper finds (in flight, in-flight.ts).
  { share: 0.001, status: 'pending' },
];

/**
 * The records the measurements use (bench/records.ts): every `every`-th record
 * belongs to `companyId` and is delivered, not opened yet, so they are spread
 * over the whole year and the whole collection.
 */
export interface SampleSpec {
  companyId: string;
  every: number;
}

export interface FillResult {
  /** The sample's records, oldest first. */
  sample: EmailRecord[];
  records: number;
  /** Records left pending, each with its in-flight entry: the sweeper's work. */
  stuck: number;
  companies: number;
  suppressions: number;
  stepKeys: number;
  requests: number;
  seconds: number;
}

/** A small, fast, seeded PRNG (mulberry32): the same database for the same `n`. */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function companiesFor(n: number): string[] {
  return Array.from({ length: Math.max(10, Math.ceil(n / RECORDS_PER_COMPANY)) }, () => randomUUID());
}

function statusOf(r: number): keyof typeof STATUS_RANK {
  let acc = 0;
  for (const o of OUTCOMES) {
    acc += o.share;
    if (r < acc) return o.status;
  }
  return 'delivered';
}

/** One record as the send path and its events leave it, created `ageMs` ago. */
export function grownRecord(
  companyId: string,
  i: number,
  ageMs: number,
  random: () => number,
  forced?: keyof typeof STATUS_RANK,
): EmailRecord {
  const id = randomUUID();
  const created = new Date(Date.now() - ageMs);
  const later = (ms: number) => new Date(created.getTime() + ms);
  const status = forced ?? statusOf(random());
  const rank = STATUS_RANK[status];
  const handedOver = status !== 'failed' && status !== 'pending';
  // Customers get many emails; a bounced address is one of its own (it is suppressed afterwards).
  const to = status === 'bounced' ? `gone${i}@example.com` : `customer${i % 5000}@example.com`;
  const record: EmailRecord = {
    _id: id,
    email_id: id,
    created_at: created,
    updated_at: later(60_000),
    subject: `Invoice INV-${i}`,
    recipient_email: to,
    recipient_name: `Customer ${i % 5000}`,
    recipients: { to: [{ email: to, name: `Customer ${i % 5000}` }], cc: [], bcc: [] },
    status_rank: rank,
    template_id: random() < 0.5 ? 'invoice' : 'welcome',
    opened: status === 'opened',
    delivered: rank >= STATUS_RANK.delivered && rank <= STATUS_RANK.opened,
    clicked: status === 'opened' && random() < 0.3,
    view_key: newViewKey(id),
    resource_type_ref: 'invoice',
    resource_id_ref: `inv-${i}`,
    time: status === 'opened' ? later(3_600_000) : null,
    company_id: companyId,
    organization_id: companyId,
    user_id: randomUUID(),
    provider_id: handedOver ? randomBytes(11).toString('base64url') : null,
    ...(handedOver ? { provider: 'sendgrid' } : {}),
    error: status === 'failed' ? 'provider rejected the message: 400 Bad Request' : null,
    error_kind: status === 'failed' ? 'provider_rejected' : null,
    tags: ['billing'],
    locale: 'en',
    language: 'en',
  };
  if (handedOver) record.sent_at = later(500);
  if (record.delivered) record.delivered_at = later(5_000);
  if (record.opened) record.opened_at = later(1_800_000);
  if (status === 'bounced') record.bounced_at = later(5_000);
  return record;
}

/** `write(start, size)` for each batch of `total`, up to FILL_IN_FLIGHT batches in flight. */
async function inBatches(
  total: number,
  batch: number,
  write: (start: number, size: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: FILL_IN_FLIGHT }, async () => {
      while (next < total) {
        const start = next;
        next += batch;
        await write(start, Math.min(batch, total - start));
      }
    }),
  );
}

// `as never`: insertMany's OptionalUnlessRequiredId type does not follow a generic document type.
const insert = async (collection: Collection<Document>, docs: Document[]) => {
  if (docs.length > 0) await collection.insertMany(docs as never, { ordered: false });
};

/**
 * Fills `db` with `n` records and what grows beside them (see the top of the
 * file); logs progress every tenth. Answers the counts and the time taken.
 */
export async function fillRecords(
  db: Db,
  n: number,
  log: (line: string) => void,
  opts: { sample?: SampleSpec; batch?: number } = {},
): Promise<FillResult> {
  const batch = opts.batch ?? FILL_BATCH;
  const sample: EmailRecord[] = [];
  const started = performance.now();
  const random = prng(n);
  const companies = companiesFor(n);
  const counts = { suppressions: 0, stepKeys: 0, requests: 0, stuck: 0 };
  let logged = 0;
  await inBatches(n, batch, async (start, size) => {
    const records = Array.from({ length: size }, (_, j) => {
      const i = start + j;
      // A year, oldest first (insertion order as in production), a little jitter.
      const ageMs = ((n - i) / n) * 365 * DAY_MS + random() * 60_000;
      if (opts.sample && i % opts.sample.every === 0) {
        const record = grownRecord(opts.sample.companyId, i, ageMs, random, 'delivered');
        sample.push(record);
        return record;
      }
      return grownRecord(companies[i % companies.length]!, i, ageMs, random);
    });
    const bounced = records.filter((r) => r.bounced_at).map(suppressionOf);
    // A third of the sends come from workflow steps, each with its step's key.
    const keyed = records.filter(() => random() < 0.3).map(stepKeyOf);
    const stuck = records
      .filter((r) => r.status_rank === STATUS_RANK.pending)
      .map((r) => ({ _id: r._id, since: r.created_at }));
    await insert(db.collection('emails'), records);
    await Promise.all([
      insert(db.collection('suppressions'), bounced),
      insert(db.collection('email_idempotency'), keyed),
      insert(db.collection(IN_FLIGHT_COLLECTION), stuck),
    ]);
    counts.stuck += stuck.length;
    counts.suppressions += bounced.length;
    counts.stepKeys += keyed.length;
    if (start + size >= ((logged + 1) * n) / 10) {
      logged++;
      log(`filled ${start + size} of ${n} records (${((performance.now() - started) / 1000).toFixed(0)} s)`);
    }
  });
  // A day of `Idempotency-Key` requests (older ones are purged after 24 h): 1% of a day's sends.
  counts.requests = Math.max(10, Math.ceil(n / 365 / 100));
  await inBatches(counts.requests, batch, (start, size) =>
    insert(
      db.collection('email_requests'),
      Array.from({ length: size }, (_, j) =>
        requestOf(companies[(start + j) % companies.length]!, start + j),
      ),
    ),
  );
  sample.sort((a, b) => a.created_at.getTime() - b.created_at.getTime());
  return {
    sample,
    records: n,
    companies: companies.length,
    ...counts,
    seconds: (performance.now() - started) / 1000,
  };

  function requestOf(company: string, i: number): Document {
    const key = `order-${i}`;
    const at = new Date(Date.now() - random() * DAY_MS);
    return {
      _id: `${company}/${key}`,
      company_id: company,
      key,
      kind: 'send',
      body_hash: randomBytes(32).toString('hex'),
      state: 'done',
      lease_until: at,
      answer: { result: { success: true, email_id: randomUUID() } },
      email_ids: [randomUUID()],
      seen: 1,
      created_at: at,
      expires_at: new Date(at.getTime() + DAY_MS),
    };
  }
}

function stepKeyOf(r: EmailRecord): Document {
  return {
    _id: `welcome-${r.user_id}:send-welcome-email`,
    email_id: r.email_id,
    created_at: r.created_at,
    attempt_until: null,
  };
}

function suppressionOf(r: EmailRecord): SuppressionDoc {
  return {
    _id: `${r.company_id}/${r.recipient_email}`,
    company_id: r.company_id!,
    email: r.recipient_email,
    reason: 'bounce',
    source: 'webhook',
    detail: '550 5.1.1 mailbox unavailable',
    email_id: r.email_id,
    created_at: r.bounced_at!,
    updated_at: r.bounced_at!,
  };
}
