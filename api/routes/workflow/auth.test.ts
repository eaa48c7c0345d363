import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Scope } from '../../../core/identity.ts';
import { WorkflowHarness } from '../../../test/support/workflow-harness.ts';
import { MAX_VISIBILITY_PAGES } from './list.ts';
import { until } from '../../../test/support/until.ts';

/**
 * The workflow routes in AUTH_MODE=api-key, against the real Temporal server:
 * every verb needs a key with its scope; a run belongs to the key's company
 * and acts as it; nobody else can read, cancel or pre-empt it.
 */
const h = new WorkflowHarness();
before(() => h.start({ AUTH_MODE: 'api-key' }));
after(() => h.stop());

const ALL: Scope[] = ['workflows:trigger', 'workflows:read', 'workflows:cancel'];

async function keyFor(companyId: string, scopes: Scope[] = ALL, organizationId?: string, test = false) {
  const { plaintext } = await h.keys.create({ companyId, organizationId, name: 'wf', scopes, test });
  // Only the key: the harness's trusted-mode identity headers are replaced.
  return {
    authorization: `Bearer ${plaintext}`,
    'x-company-id': companyId,
    'x-organization-id': organizationId ?? h.caller.organizationId,
    'x-user-id': h.caller.userId,
  };
}

/** An EIN input naming the key's company and the harness's user (the ids are required). */
const einBody = (companyId: string, overrides: Record<string, unknown> = {}) => ({
  userId: h.caller.userId,
  companyId,
  organizationId: h.caller.organizationId,
  emailAction: 'ein-verified',
  recipients: ['owner@example.com'],
  ...overrides,
});

describe('workflow routes with API keys', () => {
  it('401 unauthorized for every verb without a key', async () => {
    const noKey = { authorization: '', 'x-company-id': '', 'x-user-id': '' };
    const trigger = await h.trigger('send-welcome-email', { userId: 'u-1' }, noKey);
    assert.equal(trigger.status, 401);
    assert.deepEqual(trigger.body, { success: false, error: 'unauthorized' });
    const path = `/api/workflow/send-welcome-email?runId=send-welcome-email-${randomUUID()}`;
    assert.equal((await h.request('GET', path, undefined, noKey)).status, 401);
    assert.equal((await h.request('DELETE', path, undefined, noKey)).status, 401);
    // Identity headers alone prove nothing in this mode.
    const headersOnly = { authorization: '', 'x-company-id': randomUUID() };
    assert.equal((await h.trigger('send-welcome-email', { userId: 'u-1' }, headersOnly)).status, 401);
    // Not even which workflow names exist: 401 first, 404 only for a proven caller.
    const unknown = await h.trigger('no-such-workflow', {}, noKey);
    assert.deepEqual([unknown.status, unknown.body], [401, { success: false, error: 'unauthorized' }]);
    const known = await h.trigger('no-such-workflow', {}, await keyFor(randomUUID()));
    assert.deepEqual(
      [known.status, known.body],
      [404, { success: false, error: "workflow 'no-such-workflow' not found" }],
    );
  });

  it('each verb needs its own scope (403 naming it)', async () => {
    const company = randomUUID();
    const readOnly = await keyFor(company, ['workflows:read']);
    const trigger = await h.trigger('send-welcome-email', { userId: 'u-1' }, readOnly);
    assert.equal(trigger.status, 403);
    assert.deepEqual(trigger.body, {
      success: false,
      error: 'this API key lacks the workflows:trigger scope',
    });

    const full = await keyFor(company);
    const started = await h.trigger('send-welcome-email', { userId: 'u-scope' }, full);
    assert.equal(started.status, 202);
    const path = `/api/workflow/send-welcome-email?runId=${String(started.body['runId'])}`;
    const triggerOnly = await keyFor(company, ['workflows:trigger']);
    assert.equal((await h.request('GET', path, undefined, triggerOnly)).status, 403);
    assert.equal((await h.request('DELETE', path, undefined, readOnly)).status, 403);
    assert.equal((await h.request('GET', path, undefined, readOnly)).status, 200);
    await h.temporal.workflow.getHandle(String(started.body['runId'])).terminate('test cleanup');
  });

  it('the run carries the key’s identity; EIN ids must name the caller', async () => {
    const company = randomUUID();
    const key = await keyFor(company);
    const missing = await h.trigger(
      'send-email-received-ein',
      { ...einBody(company), userId: undefined },
      key,
    );
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body, { success: false, error: 'missing required fields: userId' });
    const res = await h.trigger('send-email-received-ein', einBody(company), key);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const handle = h.temporal.workflow.getHandle(String(res.body['runId']));
    const desc = await handle.describe();
    assert.equal((desc.memo?.['caller'] as Record<string, string>)['companyId'], company);
    const [input] = (await handle.fetchHistory()).events?.[0]?.workflowExecutionStartedEventAttributes?.input
      ?.payloads ?? [undefined];
    const started = JSON.parse(Buffer.from(input!.data!).toString()) as Record<string, string>;
    assert.equal(started['companyId'], company);
    assert.equal(started['userId'], h.caller.userId);
    await handle.terminate('test cleanup');
  });

  it('403 when the EIN body names another company or user than the caller', async () => {
    const company = randomUUID();
    const key = await keyFor(company);
    for (const patch of [
      { companyId: randomUUID() },
      { userId: randomUUID() },
      { companyId: undefined, company_id: randomUUID() },
    ]) {
      const res = await h.trigger('send-email-received-ein', einBody(company, patch), key);
      assert.equal(res.status, 403, JSON.stringify(patch));
      const field = 'userId' in patch ? 'userId' : 'companyId';
      assert.deepEqual(res.body, {
        success: false,
        error: `${field} does not match the authenticated caller`,
      });
    }
  });

  it('another company’s key gets 404 for a run, exactly like an unknown run, and cannot cancel it', async () => {
    const owner = await keyFor(randomUUID());
    const started = await h.trigger('send-welcome-email', { userId: 'u-tenant' }, owner);
    const runId = String(started.body['runId']);
    const path = `/api/workflow/send-welcome-email?runId=${runId}`;
    const stranger = await keyFor(randomUUID());
    const unknown = await h.request(
      'GET',
      `/api/workflow/send-welcome-email?runId=send-welcome-email-${randomUUID()}`,
      undefined,
      stranger,
    );
    const read = await h.request('GET', path, undefined, stranger);
    assert.equal(read.status, 404);
    assert.deepEqual(read.body, unknown.body);
    const cancel = await h.request('DELETE', path, undefined, stranger);
    assert.equal(cancel.status, 404);
    assert.equal((await h.temporal.workflow.getHandle(runId).describe()).status.name, 'RUNNING');
    assert.equal((await h.request('GET', path, undefined, owner)).status, 200);
    await h.temporal.workflow.getHandle(runId).terminate('test cleanup');
  });

  it('a key bound to an organization reads and cancels that organization’s runs only', async () => {
    const company = randomUUID();
    const [oa, o2] = [randomUUID(), randomUUID()];
    const keyA = await keyFor(company, ALL, oa);
    const key2 = await keyFor(company, ALL, o2);
    const theirs = await h.trigger('send-welcome-email', { userId: 'u-o2' }, key2);
    assert.equal(theirs.status, 202);
    const runId = String(theirs.body['runId']);
    const path = `/api/workflow/send-welcome-email?runId=${runId}`;
    const unknown = await h.request(
      'GET',
      `/api/workflow/send-welcome-email?runId=send-welcome-email-${randomUUID()}`,
      undefined,
      keyA,
    );
    const read = await h.request('GET', path, undefined, keyA);
    assert.deepEqual([read.status, read.body], [404, unknown.body]);
    const cancel = await h.request('DELETE', path, undefined, keyA);
    assert.deepEqual([cancel.status, cancel.body], [404, unknown.body]);
    assert.equal((await h.temporal.workflow.getHandle(runId).describe()).status.name, 'RUNNING');
    assert.equal((await h.request('GET', path, undefined, key2)).status, 200);
    // A company-wide key sees every organization's runs.
    const companyWide = await keyFor(company);
    assert.equal((await h.request('GET', path, undefined, companyWide)).status, 200);
    // The same Idempotency-Key under another organization is another run.
    const keyed = { 'idempotency-key': 'signup-7' };
    const a = await h.trigger('send-welcome-email', { userId: 'u-a' }, { ...keyA, ...keyed });
    const b = await h.trigger('send-welcome-email', { userId: 'u-a' }, { ...key2, ...keyed });
    assert.notEqual(a.body['runId'], b.body['runId']);
    for (const id of [runId, a.body['runId'], b.body['runId']])
      await h.temporal.workflow.getHandle(String(id)).terminate('test cleanup');
  });

  it('a key bound to an organization lists its runs in full pages: a page is short only at the end', async () => {
    const company = randomUUID();
    const [oa, ob] = [randomUUID(), randomUUID()];
    const [keyA, keyB, companyWide] = [
      await keyFor(company, ALL, oa),
      await keyFor(company, ALL, ob),
      await keyFor(company),
    ];
    // Newest first: 4 of B's, A's second, 4 of B's, A's first.
    const started: string[] = [];
    const trigger = async (key: Record<string, string>) => {
      const res = await h.trigger('send-welcome-email', { userId: `u-${randomUUID()}` }, key);
      assert.equal(res.status, 202, JSON.stringify(res.body));
      started.push(String(res.body['runId']));
      return String(res.body['runId']);
    };
    const a1 = await trigger(keyA);
    for (let i = 0; i < 4; i++) await trigger(keyB);
    const a2 = await trigger(keyA);
    for (let i = 0; i < 4; i++) await trigger(keyB);
    const runs = '/api/workflow/send-welcome-email/runs';
    await until(
      'all 10 runs listed',
      async () =>
        ((await h.request('GET', runs, undefined, companyWide)).body['runs'] as unknown[]).length === 10,
      15_000,
      200,
    );
    for (const limit of [1, 2]) {
      const seen: unknown[] = [];
      let cursor: string | null = null;
      for (let pages = 0; ; pages++) {
        assert.ok(pages < 4, 'the listing ends');
        const query: string = `?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
        const res = await h.request('GET', `${runs}${query}`, undefined, keyA);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        const page = res.body['runs'] as Array<Record<string, unknown>>;
        cursor = res.body['nextCursor'] as string | null;
        if (cursor !== null) assert.equal(page.length, limit, `page ${pages + 1} at limit=${limit} is full`);
        seen.push(...page.map((r) => r['runId']));
        if (cursor === null) break;
      }
      assert.deepEqual(seen, [a2, a1], `limit=${limit}`);
    }
    for (const id of started) await h.temporal.workflow.getHandle(id).terminate('test cleanup');
  });

  it('Idempotency-Key run ids are HMACs: the same key gives different runs for different companies', async () => {
    const idempotencyKey = 'signup-42';
    const a = await keyFor(randomUUID());
    const b = await keyFor(randomUUID());
    const first = await h.trigger(
      'send-welcome-email',
      { userId: 'u-a' },
      { ...a, 'idempotency-key': idempotencyKey },
    );
    const again = await h.trigger(
      'send-welcome-email',
      { userId: 'u-a' },
      { ...a, 'idempotency-key': idempotencyKey },
    );
    const other = await h.trigger(
      'send-welcome-email',
      { userId: 'u-b' },
      { ...b, 'idempotency-key': idempotencyKey },
    );
    assert.equal(first.body['runId'], again.body['runId']);
    assert.notEqual(first.body['runId'], other.body['runId']);
    assert.match(String(first.body['runId']), /^send-welcome-email-[0-9a-f]{40}$/);
    for (const res of [first, other]) {
      await h.temporal.workflow.getHandle(String(res.body['runId'])).terminate('test cleanup');
    }
  });

  it('a runId longer than 255 characters → 400', async () => {
    const key = await keyFor(randomUUID());
    const res = await h.request(
      'GET',
      `/api/workflow/send-welcome-email?runId=${'a'.repeat(256)}`,
      undefined,
      key,
    );
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { success: false, error: 'runId must be at most 255 characters' });
  });
});

describe('test and live runs and schedules are apart', () => {
  it('one Idempotency-Key under a test key and a live key of one company: two runs, each of its mode', async () => {
    const company = randomUUID();
    const [live, test] = [await keyFor(company), await keyFor(company, ALL, undefined, true)];
    const idem = { 'idempotency-key': `mode-${randomUUID()}` };
    const first = await h.trigger('send-email-received-ein', einBody(company), { ...test, ...idem });
    const second = await h.trigger('send-email-received-ein', einBody(company), { ...live, ...idem });
    assert.equal(first.status, 202, JSON.stringify(first.body));
    assert.equal(second.status, 202, JSON.stringify(second.body));
    assert.notEqual(first.body['runId'], second.body['runId']);
    const path = (runId: unknown) => `/api/workflow/send-email-received-ein?runId=${String(runId)}`;
    assert.equal((await h.request('GET', path(second.body['runId']), undefined, live)).status, 200);
    assert.equal((await h.request('GET', path(first.body['runId']), undefined, test)).status, 200);
    const again = await h.trigger('send-email-received-ein', einBody(company), { ...live, ...idem });
    assert.equal(again.body['runId'], second.body['runId'], 'a repeat in one mode lands on its run');
  });

  it("a key of one mode never reads, cancels, lists or changes the other mode's runs and schedules", async () => {
    const company = randomUUID();
    const scopes: Scope[] = [...ALL, 'workflows:schedule'];
    const live = await keyFor(company, scopes);
    const test = await keyFor(company, scopes, undefined, true);

    const started = await h.trigger('send-email-received-ein', einBody(company), live);
    assert.equal(started.status, 202, JSON.stringify(started.body));
    const path = `/api/workflow/send-email-received-ein?runId=${String(started.body['runId'])}`;
    assert.equal((await h.request('GET', path, undefined, test)).status, 404);
    assert.equal((await h.request('DELETE', path, undefined, test)).status, 404);
    assert.equal((await h.request('GET', path, undefined, live)).status, 200);

    const schedules = '/api/workflow/send-email-received-ein/schedules';
    const made = await h.request('POST', schedules, { every: '1h', input: einBody(company) }, live);
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const item = `${schedules}/${String((made.body['schedule'] as Record<string, unknown>)['scheduleId'])}`;
    assert.equal((await h.request('GET', item, undefined, test)).status, 404);
    assert.equal((await h.request('PATCH', item, { paused: true }, test)).status, 404);
    assert.equal((await h.request('DELETE', item, undefined, test)).status, 404);
    const listedByTest = await h.request('GET', schedules, undefined, test);
    assert.deepEqual(listedByTest.body['schedules'], []);
    assert.equal((await h.request('GET', item, undefined, live)).status, 200);
    assert.equal((await h.request('DELETE', item, undefined, live)).status, 200);
  });

  it('the runs cursor is sealed: it names no run its page hides, and continues only its own mode', async () => {
    const company = randomUUID();
    const live = await keyFor(company);
    const test = await keyFor(company, ALL, undefined, true);
    // Newest first: more live runs than one request reads for a test key at limit=1, then a test run.
    const testRun = await h.trigger('send-welcome-email', { userId: `u-${randomUUID()}` }, test);
    assert.equal(testRun.status, 202, JSON.stringify(testRun.body));
    const workflowIds = [String(testRun.body['runId'])];
    const runIds: string[] = [];
    for (let i = 0; i < MAX_VISIBILITY_PAGES + 1; i++) {
      const started = await h.trigger('send-welcome-email', { userId: `u-${randomUUID()}` }, live);
      assert.equal(started.status, 202, JSON.stringify(started.body));
      workflowIds.push(String(started.body['runId']));
      const desc = await h.temporal.workflow.getHandle(String(started.body['runId'])).describe();
      runIds.push(desc.runId);
    }
    const runs = '/api/workflow/send-welcome-email/runs';
    await until(
      'every live run listed',
      async () =>
        ((await h.request('GET', runs, undefined, live)).body['runs'] as unknown[]).length === runIds.length,
      15_000,
      200,
    );
    // The test key reads MAX_VISIBILITY_PAGES pages of one live run each, fills nothing, and
    // stops: the cursor goes on from a live run Temporal's token names, and says nothing of it.
    const hidden = await h.request('GET', `${runs}?limit=1`, undefined, test);
    assert.deepEqual(hidden.body['runs'], []);
    const cursor = String(hidden.body['nextCursor']);
    const next = await h.request(
      'GET',
      `${runs}?limit=1&cursor=${encodeURIComponent(cursor)}`,
      undefined,
      test,
    );
    assert.deepEqual(
      (next.body['runs'] as Array<Record<string, unknown>>).map((r) => r['runId']),
      [testRun.body['runId']],
      'the next page goes on to the test run',
    );
    const readable = Buffer.from(cursor.split('.')[0]!, 'base64url').toString('latin1');
    for (const runId of runIds) assert.ok(!readable.includes(runId), 'a hidden run id in the cursor');
    // Each mode's cursor continues that mode's listing only.
    const liveCursor = String(
      (await h.request('GET', `${runs}?limit=1`, undefined, live)).body['nextCursor'],
    );
    for (const [from, to] of [
      [cursor, live],
      [liveCursor, test],
    ] as const) {
      const res = await h.request('GET', `${runs}?limit=1&cursor=${encodeURIComponent(from)}`, undefined, to);
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, { success: false, error: 'cursor is invalid' });
    }
    for (const id of workflowIds) await h.temporal.workflow.getHandle(id).terminate('test cleanup');
  });
});
