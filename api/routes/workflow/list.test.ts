import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { WorkflowHarness } from '../../../test/support/workflow-harness.ts';

/**
 * GET /api/workflow/:workflowName/runs against the real Temporal server's
 * visibility store. Runs stay pending until the last test starts a worker.
 */
const h = new WorkflowHarness();
after(() => h.stop());

const WELCOME = 'send-welcome-email';
const companyA = { 'X-Company-Id': randomUUID() };
const companyB = { 'X-Company-Id': randomUUID() };
const runsA: string[] = [];

interface Page {
  runs: Array<Record<string, unknown>>;
  nextCursor: string | null;
}

const list = (query: string, headers: Record<string, string> = companyA) =>
  h.request('GET', `/api/workflow/${WELCOME}/runs${query}`, undefined, headers);

/** Visibility is eventually consistent: ask until the listing shows `count` runs. */
async function listed(query: string, count: number, headers = companyA): Promise<Page> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const res = await list(query, headers);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const page = res.body as unknown as Page;
    if (page.runs.length >= count || Date.now() > deadline) return page;
    await new Promise((r) => setTimeout(r, 250));
  }
}

before(async () => {
  await h.start();
  for (let i = 0; i < 3; i++) {
    const { status, body } = await h.trigger(WELCOME, { userId: `user-${randomUUID()}` }, companyA);
    assert.equal(status, 202);
    runsA.push(body['runId'] as string);
    await new Promise((r) => setTimeout(r, 20)); // distinct start times
  }
  await h.trigger(WELCOME, { userId: `user-${randomUUID()}` }, companyB);
});

describe('GET /api/workflow/:workflowName/runs', () => {
  it("lists the company's runs newest first, each shaped like the status answer without result", async () => {
    const page = await listed('', 3);
    assert.deepEqual(
      page.runs.map((r) => r['runId']),
      [...runsA].reverse(),
    );
    assert.equal(page.nextCursor, null);
    for (const run of page.runs) {
      assert.equal(run['workflowName'], WELCOME);
      assert.equal(run['status'], 'pending');
      assert.equal(run['error'], null);
      assert.ok(!('result' in run));
      assert.ok(!Number.isNaN(Date.parse(run['createdAt'] as string)));
    }
  });

  it("never shows another company's runs", async () => {
    const page = await listed('', 1, companyB);
    assert.equal(page.runs.length, 1);
    assert.ok(!runsA.includes(page.runs[0]!['runId'] as string));
    const none = await list('', { 'X-Company-Id': randomUUID() });
    assert.deepEqual((none.body as unknown as Page).runs, []);
  });

  it('pages with an opaque cursor; an edited or borrowed cursor is 400', async () => {
    await listed('', 3);
    const first = (await list('?limit=2')).body as unknown as Page;
    assert.equal(first.runs.length, 2);
    assert.ok(first.nextCursor);
    const second = (await list(`?limit=2&cursor=${encodeURIComponent(first.nextCursor)}`))
      .body as unknown as Page;
    assert.deepEqual(
      [...first.runs, ...second.runs].map((r) => r['runId']),
      [...runsA].reverse(),
    );
    assert.equal(second.nextCursor, null);

    const [token, mac] = first.nextCursor.split('.') as [string, string];
    const edited = `${token.slice(0, -2)}AA.${mac}`;
    for (const [cursor, headers] of [
      [edited, companyA],
      ['not-a-cursor', companyA],
      [first.nextCursor, companyB],
    ] as const) {
      const res = await list(`?limit=2&cursor=${encodeURIComponent(cursor)}`, headers);
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, { success: false, error: 'cursor is invalid' });
    }
    // A cursor continues only the listing it came from.
    const otherFilter = await list(`?limit=2&status=pending&cursor=${encodeURIComponent(first.nextCursor)}`);
    assert.equal(otherFilter.status, 400);
  });

  it('answers 400 for a bad limit, status or time range', async () => {
    for (const query of [
      '?limit=0',
      '?limit=101',
      '?limit=abc',
      '?status=done',
      '?from=yesterday',
      "?from=2026-01-01T00:00:00Z' OR CompanyId != '",
      '?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z',
      '?limit=101&limit=2',
    ]) {
      const res = await list(query);
      assert.equal(res.status, 400, query);
      assert.equal(res.body['success'], false);
      assert.equal(typeof res.body['error'], 'string');
    }
    // Said in words: the accepted values, never a regular expression.
    assert.equal(
      (await list('?limit=101')).body['error'],
      'invalid field limit: must be 1 to 100 (default 20).',
    );
    assert.equal(
      (await list('?status=done')).body['error'],
      'invalid field status: must be one of: pending, running, completed, failed, cancelled.',
    );
  });

  it('takes the first value of a repeated query parameter, as every route does', async () => {
    await listed('', 3);
    const twice = (await list('?limit=1&limit=2')).body as unknown as Page;
    assert.equal(twice.runs.length, 1);
    assert.ok(twice.nextCursor);
    const statuses = await list('?status=pending&status=completed');
    assert.equal(statuses.status, 200, JSON.stringify(statuses.body));
    assert.equal((statuses.body as unknown as Page).runs.length, 3);
    // The first value is checked like a single one, in the same words.
    assert.deepEqual((await list('?status=done&status=failed')).body, {
      success: false,
      error: 'invalid field status: must be one of: pending, running, completed, failed, cancelled.',
    });
  });

  it('filters by time range and by status', async () => {
    await listed('', 3);
    const future = await list(`?from=${encodeURIComponent(new Date(Date.now() + 3_600_000).toISOString())}`);
    assert.deepEqual((future.body as unknown as Page).runs, []);
    await h.startWorker(); // the runs' users do not exist: they fail
    for (const runId of runsA) await h.waitForStatus(WELCOME, runId, 'failed', 20_000, companyA);
    const failed = await listed('?status=failed', 3);
    assert.equal(failed.runs.length, 3);
    assert.match(failed.runs[0]!['error'] as string, /user not found/);
    const completed = await list('?status=completed');
    assert.deepEqual((completed.body as unknown as Page).runs, []);
  });

  it('answers 404 for an unknown workflow', async () => {
    const res = await h.request('GET', '/api/workflow/no-such-workflow/runs', undefined, companyA);
    assert.equal(res.status, 404);
  });
});
