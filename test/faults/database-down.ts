import { randomUUID } from 'node:crypto';
import { welcomeBody } from '../support/sample-emails.ts';
import { Checks, Stack, answersWhileDown, killServer, startMongoServer, type FaultCase } from './stack.ts';
import { until } from '../support/until.ts';

const DOWN_MS = 10_000;

/**
 * Case 4: MongoDB (FerretDB) killed for 10 s while welcome runs are in
 * flight. While it is down the gateway answers 5xx within 2 s (never hangs)
 * and /ready is 503, while the tracking pixel is still served; once it is
 * back, gateway and worker recover without a restart, every run completes,
 * one email per user, and the open the pixel took while it was down is in
 * the record (its buffered write retried, not dropped).
 */
export const databaseDown: FaultCase = {
  id: 4,
  name: 'FerretDB killed for 10 s',
  async run(servers) {
    const stack = await new Stack(servers, 'case4').start();
    const check = new Checks();
    try {
      stack.fake.delayMs = 300;
      const users = await stack.insertUsers(20);
      const runIds = await stack.triggerWelcome(users);
      await until('5 provider requests', async () => stack.fake.received.length >= 5, 120_000, 50);
      const opened = await stack.request(
        'POST',
        '/api/email/send',
        welcomeBody({ to: 'opened@example.com' }),
      );
      const openedId = String(opened.body['email_id']);
      const openedRecord = await stack.db
        .collection<{ _id: string; view_key: string }>('emails')
        .findOne({ _id: openedId });
      const pixel = `/api/email/track?view_key=${encodeURIComponent(openedRecord?.view_key ?? '')}`;

      await killServer(servers.mongo);
      // One open, at the start of the outage: its buffered write fails for the next 10 s.
      const pixelWhileDown = await stack.request('GET', pixel);
      const during = await stack.probeWhileDown(
        DOWN_MS,
        [
          ['send', 'POST', '/api/email/send', welcomeBody({ to: 'down@example.com', subject: 'while down' })],
          ['status', 'GET', `/api/email/status/${randomUUID()}`, undefined],
          ['ready', 'GET', '/ready', undefined],
        ],
        10_000,
      );
      servers.mongo = await startMongoServer(servers, servers.mongoPort);
      const readyAfterMs = await stack.readyAgainAfterMs();
      const readyAt = Date.now();
      const sendAfter = await until(
        'a send to succeed',
        async () => {
          const a = await stack.request(
            'POST',
            '/api/email/send',
            welcomeBody({ to: 'after@example.com' }),
            10_000,
          );
          return a.status === 200 ? a : undefined;
        },
        60_000,
      );
      const { completed, welcomeOnce, duplicates } = await stack.welcomeOutcome(runIds, users, 300_000);
      // A send the provider took while the record could not be written is recorded once the database is back.
      const settled = await until(
        'no record pending',
        async () => !(await stack.recordsByStatus())['pending'],
        60_000,
        1000,
      )
        .then(() => true)
        .catch(() => false);
      const records = await stack.recordsByStatus();
      const openLandedMs = await until(
        'the open taken while down in the record',
        async () => {
          const r = await stack.db
            .collection<{ _id: string; opened?: boolean }>('emails')
            .findOne({ _id: openedId });
          return r?.opened === true ? Date.now() - readyAt : undefined;
        },
        30_000,
        250,
      ).catch(() => undefined);

      const requests = during.filter((d) => d.what !== 'ready');
      const ready = during.filter((d) => d.what === 'ready');
      const slowest = Math.max(...during.map((d) => d.ms));
      check.expect(
        requests.every((d) => d.status >= 500),
        `answers while down: ${[...new Set(requests.map((d) => d.status))]}`,
      );
      check.expect(slowest <= 2000, `slowest answer while down: ${slowest} ms`);
      check.expect(
        ready.every((d) => d.status === 503),
        `/ready while down: ${[...new Set(ready.map((d) => d.status))]}`,
      );
      check.expect(pixelWhileDown.status === 200, `pixel while down: ${pixelWhileDown.status}`);
      check.expect(openLandedMs !== undefined, 'the open taken while down is in the record within 30 s');
      check.expect(completed === 20, `${completed}/20 runs completed`);
      check.expect(welcomeOnce === 20, `${welcomeOnce}/20 users got exactly one email`);
      check.expect(duplicates === 0, `${duplicates} duplicates`);
      check.expect(settled, `${records['pending']} records left pending`);
      return check.result({
        'down seconds': DOWN_MS / 1000,
        'requests while down': during.length,
        'answers while down': answersWhileDown(during),
        'slowest answer while down ms': slowest,
        'send error while down': during.find((d) => d.what === 'send')?.body['error'],
        '/ready 200 again after ms': readyAfterMs,
        'first send after recovery': sendAfter.status,
        'pixel while down': pixelWhileDown.status,
        'open in the record after /ready ms': openLandedMs ?? 'not within 30 s',
        runs: runIds.length,
        completed,
        'users with exactly one email': welcomeOnce,
        duplicates,
        records,
      });
    } finally {
      await stack.close();
    }
  },
};
