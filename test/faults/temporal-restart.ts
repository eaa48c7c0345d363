import { randomUUID } from 'node:crypto';
import { Checks, Stack, answersWhileDown, killServer, startTemporalServer, type FaultCase } from './stack.ts';
import { until } from '../support/until.ts';

const DOWN_MS = 10_000;

/**
 * Case 2: the Temporal dev server (history in a SQLite file) killed while 30
 * welcome runs are in flight, and restarted on the same file 10 s later.
 * While it is down the gateway answers 5xx (never hangs); afterwards gateway
 * and worker recover by themselves and every run started before the kill
 * completes, one email per user.
 */
export const temporalRestart: FaultCase = {
  id: 2,
  name: 'Temporal killed and restarted mid-load',
  async run(servers) {
    const stack = await new Stack(servers, 'case2').start();
    const check = new Checks();
    try {
      stack.fake.delayMs = 500;
      const users = await stack.insertUsers(30);
      const runIds = await stack.triggerWelcome(users);
      await until('5 provider requests', async () => stack.fake.received.length >= 5, 120_000, 50);

      await killServer(servers.temporal);
      const during = await stack.probeWhileDown(
        DOWN_MS,
        [
          ['trigger', 'POST', '/api/workflow/send-welcome-email', { userId: `nobody-${randomUUID()}` }],
          [
            'status',
            'GET',
            `/api/workflow/send-welcome-email?runId=${encodeURIComponent(runIds[0]!)}`,
            undefined,
          ],
          ['ready', 'GET', '/ready', undefined],
        ],
        20_000,
      );
      servers.temporal = await startTemporalServer(servers, servers.temporalPort);
      const readyAfterMs = await stack.readyAgainAfterMs();
      const { completed, welcomeOnce } = await stack.welcomeOutcome(runIds, users, 300_000);
      const records = await stack.recordsByStatus();

      const requests = during.filter((d) => d.what !== 'ready');
      const slowest = Math.max(...during.map((d) => d.ms));
      check.expect(
        requests.every((d) => d.status >= 500),
        `answers while down: ${[...new Set(requests.map((d) => d.status))]}`,
      );
      check.expect(
        during.filter((d) => d.what === 'ready').every((d) => d.status === 503),
        '/ready 503 while down',
      );
      check.expect(completed === 30, `${completed}/30 runs completed`);
      check.expect(welcomeOnce === 30, `${welcomeOnce}/30 users got exactly one email`);
      check.expect(!records['pending'], `${records['pending']} records left pending`);
      return check.result({
        'down seconds': DOWN_MS / 1000,
        'requests while down': during.length,
        'answers while down': answersWhileDown(during),
        'slowest answer while down ms': slowest,
        'trigger error while down': during.find((d) => d.what === 'trigger')?.body['error'],
        '/ready 200 again after ms': readyAfterMs,
        runs: runIds.length,
        completed,
        'users with exactly one email': welcomeOnce,
        records,
      });
    } finally {
      await stack.close();
    }
  },
};
