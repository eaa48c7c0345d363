import { welcomeBody } from '../support/sample-emails.ts';
import { Checks, Stack, sleep, type FaultCase } from './stack.ts';

const OUTAGE_MS = 30_000;

/**
 * Case 3: the provider answers 503 for 30 s. Welcome runs started during the
 * outage retry and all complete once it is over, each email accepted once;
 * HTTP sends during the outage answer 500 and leave a `failed` record saying
 * why; nothing is left pending, nothing lost without a record.
 */
export const providerOutage: FaultCase = {
  id: 3,
  name: 'provider answers 503 for 30 s',
  async run(servers) {
    const stack = await new Stack(servers, 'case3').start();
    const check = new Checks();
    try {
      const t0 = Date.now();
      stack.fake.outage = 503;
      const users = await stack.insertUsers(20);
      const runIds = await stack.triggerWelcome(users);
      const http = [];
      for (let i = 0; i < 10; i++) {
        http.push(
          await stack.request(
            'POST',
            '/api/email/send',
            welcomeBody({ to: `http-${i}@example.com`, subject: `outage ${i}` }),
          ),
        );
        await sleep(1000);
      }
      await sleep(Math.max(0, OUTAGE_MS - (Date.now() - t0)));
      stack.fake.outage = undefined;
      const recoveredAt = Date.now();
      const { completed, welcomeOnce: welcomeAccepted } = await stack.welcomeOutcome(runIds, users, 240_000);
      const httpFailedRecords = await stack.db
        .collection<{ subject: string; status_rank: number; error: string }>('emails')
        .find({ subject: { $regex: '^outage ' } })
        .toArray();
      const records = await stack.recordsByStatus();
      check.expect(completed === 20, `${completed}/20 runs completed`);
      check.expect(welcomeAccepted === 20, `${welcomeAccepted}/20 users got exactly one email`);
      check.expect(
        http.every(
          (a) => a.status === 500 && /^email provider unavailable: HTTP 503/.test(String(a.body['error'])),
        ),
        `HTTP answers during the outage: ${http.map((a) => a.status).join(',')}`,
      );
      check.expect(
        httpFailedRecords.length === 10 && httpFailedRecords.every((r) => r.status_rank === 5 && r.error),
        `${httpFailedRecords.length} failed records for the 10 HTTP sends`,
      );
      check.expect(!records['pending'], `${records['pending']} records left pending`);
      return check.result({
        'outage seconds': OUTAGE_MS / 1000,
        runs: runIds.length,
        completed,
        'users with exactly one email': welcomeAccepted,
        'provider requests (503 + 202)': stack.fake.received.length,
        'HTTP sends during the outage': http.length,
        'HTTP answers': [...new Set(http.map((a) => a.status))],
        'HTTP answer time max ms': Math.max(...http.map((a) => a.ms)),
        'HTTP error': http[0]?.body['error'],
        records,
        'seconds from recovery to all runs finished': Math.round((Date.now() - recoveredAt) / 1000),
      });
    } finally {
      await stack.close();
    }
  },
};
