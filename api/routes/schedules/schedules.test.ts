import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { until } from '../../../test/support/until.ts';
import { WorkflowHarness } from '../../../test/support/workflow-harness.ts';
import { specOf } from './temporal-schedule.ts';

const EVERY_INVALID = 'every must be a number followed by s, m, h or d, e.g. 1h';
const TIMEZONE_INVALID = 'timezone must be an IANA time zone name, e.g. Europe/Berlin';

/**
 * Recurring schedules on the real Temporal server: each is a Temporal
 * Schedule whose runs act as the company that created it.
 */
const h = new WorkflowHarness();
before(async () => {
  await h.start({ SCHEDULE_MIN_INTERVAL_SECONDS: '1' });
  await h.startWorker();
});
after(() => h.stop());

const EIN = 'send-email-received-ein';
const base = `/api/workflow/${EIN}/schedules`;
const einInput = () => ({
  userId: h.caller.userId,
  companyId: h.caller.companyId,
  organizationId: h.caller.organizationId,
  emailAction: 'ein-received',
  recipients: [`sched-${randomUUID()}@example.com`],
});
type Schedule = {
  scheduleId: string;
  paused: boolean;
  recentRuns: Array<{ runId: string }>;
  nextRunAt: string[];
  every: string | null;
  cron: string | null;
  timezone: string;
};
const scheduleOf = (body: Record<string, unknown>) => body['schedule'] as Schedule;

async function read(id: string): Promise<Schedule> {
  const res = await h.request('GET', `${base}/${id}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return scheduleOf(res.body);
}

async function untilRuns(id: string, count: number): Promise<Schedule> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const schedule = await read(id);
    if (schedule.recentRuns.length >= count) return schedule;
    if (Date.now() > deadline) assert.fail(`only ${schedule.recentRuns.length} runs`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('recurring schedules', () => {
  it('an every: 2s schedule starts runs that complete, acting as the company; pausing stops them', async () => {
    const created = await h.request('POST', base, { every: '2s', input: einInput() });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const schedule = scheduleOf(created.body);
    assert.equal(schedule.every, '2s');
    assert.equal(schedule.timezone, 'UTC');
    assert.equal(schedule.paused, false);

    const running = await untilRuns(schedule.scheduleId, 2);
    for (const { runId } of running.recentRuns.slice(0, 2)) {
      const run = await h.waitForStatus(EIN, runId, 'completed');
      assert.equal(run.result?.result['message'], 'ein email sent');
      // It takes its company's turns on the task queue (docs/scaling.md).
      const history = await h.temporal.workflow.getHandle(runId).fetchHistory();
      const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
      assert.equal(started?.priority?.fairnessKey, h.caller.companyId);
    }

    const paused = await h.request('PATCH', `${base}/${schedule.scheduleId}`, { paused: true });
    assert.equal(paused.status, 200);
    assert.equal(scheduleOf(paused.body).paused, true);
    const before = (await read(schedule.scheduleId)).recentRuns.length;
    await new Promise((r) => setTimeout(r, 5_000));
    assert.equal((await read(schedule.scheduleId)).recentRuns.length, before, 'no run while paused');

    const removed = await h.request('DELETE', `${base}/${schedule.scheduleId}`);
    assert.deepEqual(removed.body, { success: true, scheduleId: schedule.scheduleId, deleted: true });
    assert.equal((await h.request('GET', `${base}/${schedule.scheduleId}`)).status, 404);
  });

  it('another company cannot see or change it (404, like an unknown id)', async () => {
    const created = await h.request('POST', base, {
      cron: '0 9 * * MON',
      timezone: 'Europe/Berlin',
      input: einInput(),
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const { scheduleId, nextRunAt, cron } = scheduleOf(created.body);
    assert.equal(cron, '0 9 * * MON');
    assert.ok(nextRunAt.length > 0);
    // A new cron keeps the time zone the body does not name.
    const moved = await h.request('PATCH', `${base}/${scheduleId}`, { cron: '0 10 * * MON' });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    assert.deepEqual(
      [scheduleOf(moved.body).cron, scheduleOf(moved.body).timezone],
      ['0 10 * * MON', 'Europe/Berlin'],
    );
    const other = { 'X-Company-Id': randomUUID() };
    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { paused: true }],
      ['DELETE', undefined],
    ] as const) {
      const res = await h.request(method, `${base}/${scheduleId}`, body, other);
      assert.equal(res.status, 404, method);
      assert.deepEqual(res.body, { success: false, error: 'schedule not found' });
    }
    const theirs = await h.request('GET', base, undefined, other);
    assert.deepEqual(theirs.body['schedules'], []);
    const deadline = Date.now() + 15_000;
    let ours: Schedule[] = [];
    while (Date.now() < deadline) {
      ours = (await h.request('GET', base)).body['schedules'] as Schedule[];
      if (ours.some((s) => s.scheduleId === scheduleId)) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    assert.ok(
      ours.some((s) => s.scheduleId === scheduleId),
      'listed for its company',
    );
    assert.equal((await h.request('DELETE', `${base}/${scheduleId}`)).status, 200);
  });

  it('a company holds at most 100 schedules of a workflow (409 past that, creates at once too), and the list shows them all', async () => {
    const company = { 'X-Company-Id': randomUUID() };
    const create = () =>
      h.request(
        'POST',
        base,
        { cron: '0 9 1 1 *', paused: true, input: { ...einInput(), companyId: company['X-Company-Id'] } },
        company,
      );
    const ids: string[] = [];
    for (let batch = 0; batch < 9; batch++)
      for (const res of await Promise.all(Array.from({ length: 10 }, create))) {
        assert.equal(res.status, 201, JSON.stringify(res.body));
        ids.push(scheduleOf(res.body).scheduleId);
      }
    // 20 at once with room for 10, before visibility lists the last ones: exactly 10 made.
    const last = await Promise.all(Array.from({ length: 20 }, create));
    const statuses = last.map((res) => res.status);
    assert.equal(statuses.filter((s) => s === 201).length, 10, statuses.join(' '));
    assert.equal(statuses.filter((s) => s === 409).length, 10, statuses.join(' '));
    for (const res of last) if (res.status === 201) ids.push(scheduleOf(res.body).scheduleId);
    const listed = async () =>
      ((await h.request('GET', base, undefined, company)).body['schedules'] as Schedule[]).map(
        (s) => s.scheduleId,
      );
    // Visibility is eventually consistent: the cap counts what it lists.
    await until('all 100 are listed', async () => (await listed()).length === 100, 30_000, 500);
    assert.deepEqual((await listed()).sort(), [...ids].sort());

    const refused = await create();
    assert.equal(refused.status, 409);
    assert.deepEqual(refused.body, {
      success: false,
      error: `a company may hold at most 100 schedules of ${EIN}; delete one first`,
    });
    // Another company is not held back by this one's schedules.
    const theirs = await h.request('POST', base, { cron: '0 9 1 1 *', paused: true, input: einInput() });
    assert.equal(theirs.status, 201, JSON.stringify(theirs.body));

    assert.equal((await h.request('DELETE', `${base}/${ids.pop()!}`, undefined, company)).status, 200);
    await until('99 are listed', async () => (await listed()).length === 99, 30_000, 500);
    const again = await create();
    assert.equal(again.status, 201, JSON.stringify(again.body));
    ids.push(scheduleOf(again.body).scheduleId);

    for (const id of ids) await h.request('DELETE', `${base}/${id}`, undefined, company);
    await h.request('DELETE', `${base}/${scheduleOf(theirs.body).scheduleId}`);
  });

  it('validates the spec, the time zone and the input like a trigger', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ input: einInput() }, /exactly one of cron and every/],
      [{ cron: '* * * * *', every: '1h', input: einInput() }, /exactly one of cron and every/],
      [{ every: '0s', input: einInput() }, /every/],
      [{ every: '1h', timezone: 'Mars/Olympus', input: einInput() }, /IANA time zone/],
      [
        { cron: 'every day', input: einInput() },
        /^invalid field cron: must be a five-field cron expression, e\.g\. 0 9 \* \* MON\.$/,
      ],
      [{ cron: '99 * * * *', input: einInput() }, /schedule is not valid/],
      [{ every: '1h', input: { ...einInput(), recipients: ['not-an-address'] } }, /recipients/],
      [{ every: '1h', input: einInput(), extra: 1 }, /extra/],
    ];
    for (const [body, error] of cases) {
      const res = await h.request('POST', base, body);
      assert.equal(res.status, 400, JSON.stringify(body) + JSON.stringify(res.body));
      assert.match(String(res.body['error']), error);
    }
    // No schedule id is that long: refused before Temporal is asked, as the reference says.
    const long = `${base}/${'s'.repeat(201)}`;
    for (const [method, body] of [['GET'], ['PATCH', { paused: true }], ['DELETE']] as const) {
      const res = await h.request(method, long, body);
      assert.equal(res.status, 400, `${method} ${JSON.stringify(res.body)}`);
      assert.match(String(res.body['error']), /scheduleId/);
    }
  });

  it('words a bad every, an unknown time zone and an empty change the way the docs list them', async () => {
    const refused = async (method: 'POST' | 'PATCH', path: string, body: unknown, error: string) => {
      const res = await h.request(method, path, body);
      assert.deepEqual([res.status, res.body], [400, { success: false, error }], JSON.stringify(body));
    };
    for (const every of ['1w', '0s', '1.5h', '-5m', '', '1234567s', 60])
      await refused('POST', base, { every, input: einInput() }, EVERY_INVALID);
    // ICU takes any spelling of a name; Temporal (Go's zone database) only the exact one.
    for (const timezone of ['europe/berlin', 'us/pacific', 'Mars/Olympus', '', 'x'.repeat(65), 3])
      await refused('POST', base, { every: '1h', timezone, input: einInput() }, TIMEZONE_INVALID);

    const created = await h.request('POST', base, { cron: '0 9 1 1 *', paused: true, input: einInput() });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const item = `${base}/${scheduleOf(created.body).scheduleId}`;
    await refused(
      'PATCH',
      item,
      {},
      'nothing to change: give at least one of cron, every, timezone, input, paused',
    );
    await refused('PATCH', item, { every: '1w' }, EVERY_INVALID);
    for (const timezone of ['europe/berlin', 'us/pacific'])
      await refused('PATCH', item, { timezone }, TIMEZONE_INVALID);
    assert.equal(scheduleOf((await h.request('GET', item)).body).timezone, 'UTC', 'unchanged');
    assert.equal((await h.request('DELETE', item)).status, 200);
  });

  it('takes time zones by their current IANA names as well as their older ones', () => {
    for (const zone of ['Asia/Kolkata', 'Asia/Calcutta', 'Europe/Kyiv', 'Etc/UTC', 'US/Pacific', 'UTC'])
      assert.equal(specOf({ every: '1h', timezone: zone }, 60).spec.timezone, zone);
    for (const zone of ['Mars/Olympus', '+05:00', '', 'europe/berlin', 'utc'])
      assert.throws(() => specOf({ every: '1h', timezone: zone }, 60), /IANA time zone/, zone);
  });

  it('an every below SCHEDULE_MIN_INTERVAL_SECONDS is refused', () => {
    assert.throws(() => specOf({ every: '30s' }, 60), /every must be at least 60 seconds/);
    assert.deepEqual(specOf({ every: '2m' }, 60).spec.intervals, [{ every: '120s' }]);
  });
});
