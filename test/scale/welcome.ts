import { randomUUID } from 'node:crypto';
import { Checks } from '../faults/stack.ts';
import type { ScaleCase } from './case.ts';

/**
 * Two send-welcome-email triggers for the same user at once, through the
 * proxy (so one per gateway), without an Idempotency-Key: two runs, picked
 * up by whichever worker polls first. Expected: every run completes and each
 * user gets exactly one welcome email.
 */

const USERS = 30;

export const welcomeRace: ScaleCase = {
  name: 'concurrent send-welcome-email triggers for one user via both gateways',
  async run(stack) {
    const check = new Checks();
    const prefix = `race-${randomUUID().slice(0, 8)}`;
    const users = await stack.insertUsers(prefix, USERS);
    const triggers = await Promise.all(
      users.map((userId) => Promise.all([stack.trigger({ userId }), stack.trigger({ userId })])),
    );
    const runIds = triggers.flat().map((t) => String(t.body['runId']));
    const runs = await stack.waitForRuns(runIds, 180_000);
    const mail = stack.acceptedFor(prefix);
    const messages = [...runs.values()].map((r) => {
      const inner = (r.result['result'] ?? r.result) as Record<string, unknown>;
      return String(inner['message'] ?? r.error);
    });
    const byMessage: Record<string, number> = {};
    for (const m of messages) byMessage[m] = (byMessage[m] ?? 0) + 1;
    const completed = [...runs.values()].filter((r) => r.status === 'completed').length;
    const split = triggers.filter(([a, b]) => a.upstream !== b.upstream).length;
    const once = users.filter((u) => mail.get(`${u}@example.com`) === 1).length;
    const records = await stack.recordsFor(prefix);
    check.expect(split === USERS, `${split}/${USERS} trigger pairs reached both gateways`);
    check.expect(completed === USERS * 2, `${completed}/${USERS * 2} runs completed`);
    check.expect(once === USERS, `${once}/${USERS} users got exactly one welcome email`);
    check.expect(mail.size === USERS, `${mail.size} users got any email`);
    check.expect(records.length === USERS, `${records.length} records for ${USERS} users`);
    return check.result({
      users: USERS,
      runs: runIds.length,
      'pairs split over both gateways': split,
      completed,
      'run answers': byMessage,
      'emails accepted': [...mail.values()].reduce((a, b) => a + b, 0),
      'users with exactly one': once,
      records: records.length,
    });
  },
};
