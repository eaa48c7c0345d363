import { randomUUID } from 'node:crypto';
import { invoiceBody } from '../support/sample-emails.ts';
import { Checks, Stack, killServer, sleep, startTemporalServer, type FaultCase } from './stack.ts';
import { until } from '../support/until.ts';

const SCHEDULED = 10;
const DOWN_MS = 8_000;

/**
 * Case 7: scheduled sends across a restart of everything that runs them.
 * 10 emails scheduled 15–24 s ahead and one more cancelled; then the worker
 * is SIGKILLed and Temporal killed; while both are down, 3 more are scheduled
 * (the gateway answers 200 within its start deadline, the outbox starts their
 * runs later). Temporal restarts on the same history file, a new worker
 * starts. Expected: every scheduled email sent exactly once, none before
 * its send_at, the cancelled one never, no record left pending.
 */
export const scheduledRestart: FaultCase = {
  id: 7,
  name: 'scheduled sends across a worker and Temporal restart',
  async run(servers) {
    const stack = await new Stack(servers, 'case7').start();
    const check = new Checks();
    try {
      const sentAt = new Map<string, number>();
      stack.fake.onAccepted = (mail) => {
        const to = mail.body.personalizations[0]?.to[0]?.email ?? '?';
        if (!sentAt.has(to)) sentAt.set(to, Date.now());
      };
      const due = new Map<string, number>();
      const schedule = async (to: string, inMs: number) => {
        const sendAt = new Date(Date.now() + inMs).toISOString();
        const res = await stack.request('POST', '/api/email/send', invoiceBody({ to, send_at: sendAt }));
        due.set(to, Date.parse(sendAt));
        return res;
      };
      const address = (what: string) => `case7-${what}-${randomUUID().slice(0, 8)}@example.com`;

      const before: string[] = [];
      for (let i = 0; i < SCHEDULED; i++) {
        const to = address(`before-${i}`);
        const res = await schedule(to, 15_000 + i * 1000);
        if (res.status !== 200)
          throw new Error(`schedule answered ${res.status}: ${JSON.stringify(res.body)}`);
        before.push(to);
      }
      const cancelledTo = address('cancelled');
      const cancelled = await schedule(cancelledTo, 16_000);
      const cancel = await stack.request(
        'DELETE',
        `/api/email/scheduled/${String(cancelled.body['email_id'])}`,
      );
      check.expect(cancel.status === 200, `cancel answered ${cancel.status}`);

      for (const worker of [...stack.workers]) await stack.killWorker(worker);
      await killServer(servers.temporal);
      const during: Array<{ to: string; status: number; ms: number }> = [];
      for (let i = 0; i < 3; i++) {
        const to = address(`during-${i}`);
        const res = await schedule(to, 12_000);
        during.push({ to, status: res.status, ms: res.ms });
      }
      await sleep(DOWN_MS);
      servers.temporal = await startTemporalServer(servers, servers.temporalPort);
      await stack.startWorker();

      const expected = [...before, ...during.filter((d) => d.status === 200).map((d) => d.to)];
      await until(
        'every scheduled email sent',
        async () => expected.every((to) => sentAt.has(to)),
        180_000,
        500,
      );
      // Time for a duplicate to show up, were there one.
      await sleep(5_000);
      const perRecipient = stack.acceptedPerRecipient();
      const once = expected.filter((to) => perRecipient.get(to) === 1).length;
      const early = expected.filter((to) => (sentAt.get(to) ?? Infinity) < (due.get(to) ?? 0));
      const lateness = expected.map((to) => (sentAt.get(to) ?? 0) - (due.get(to) ?? 0));
      const records = await stack.recordsByStatus();

      check.expect(
        during.every((d) => d.status === 200),
        `scheduling while Temporal was down: ${during.map((d) => d.status)}`,
      );
      check.expect(once === expected.length, `${once}/${expected.length} scheduled emails sent exactly once`);
      check.expect(early.length === 0, `${early.length} sent before their send_at`);
      check.expect(!perRecipient.has(cancelledTo), 'the cancelled email was sent');
      check.expect(!records['pending'], `${records['pending']} records left pending`);
      return check.result({
        'scheduled before the restart': before.length,
        'scheduled while Temporal was down': during.length,
        'answers while down (status, ms)': during.map((d) => [d.status, d.ms]),
        'sent exactly once': once,
        'sent early': early.length,
        'max seconds late': Math.round(Math.max(...lateness) / 100) / 10,
        'cancelled one sent': perRecipient.has(cancelledTo),
        records,
      });
    } finally {
      await stack.close();
    }
  },
};
