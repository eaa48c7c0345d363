import { Checks, Stack, until, type FaultCase } from './stack.ts';

/**
 * Case 1: 100 welcome runs in flight, the worker SIGKILLed three times (each
 * time once more sends have reached the provider) and restarted at once.
 * Expected: 100/100 runs completed, exactly 100 emails accepted by the
 * provider, one per user, no record left pending.
 */
export const workerKilled: FaultCase = {
  id: 1,
  name: 'worker SIGKILLed 3x during 100 welcome runs',
  async run(servers) {
    const stack = await new Stack(servers, 'case1').start();
    const check = new Checks();
    try {
      const t0 = Date.now();
      stack.fake.delayMs = 500; // sends observably in flight when the worker dies
      const users = await stack.insertUsers(100);
      const runIds = await stack.triggerWelcome(users);
      const killedAt: number[] = [];
      for (const threshold of [10, 40, 70]) {
        await until(
          `${threshold} provider requests`,
          async () => stack.fake.received.length >= threshold,
          180_000,
          50,
        );
        const [victim] = stack.workers;
        if (victim) await stack.killWorker(victim);
        killedAt.push(stack.fake.received.length);
        await stack.startWorker();
      }
      const runs = await stack.waitForRuns(runIds, 300_000);
      const statuses = [...runs.values()].map((r) => r.status);
      const completed = statuses.filter((s) => s === 'completed').length;
      const perRecipient = stack.acceptedPerRecipient();
      const duplicates = [...perRecipient.values()].filter((n) => n > 1).length;
      const records = await stack.recordsByStatus();
      const errors = [...runs.values()].filter((r) => r.status !== 'completed').map((r) => r.error);
      check.expect(completed === 100, `${completed}/100 runs completed`);
      check.expect(stack.fake.accepted.length === 100, `${stack.fake.accepted.length} emails accepted`);
      check.expect(perRecipient.size === 100, `${perRecipient.size} distinct recipients`);
      check.expect(duplicates === 0, `${duplicates} recipients got more than one email`);
      check.expect(!records['pending'], `${records['pending']} records left pending`);
      return check.result({
        runs: runIds.length,
        completed,
        failed: statuses.filter((s) => s === 'failed').length,
        kills: killedAt.length,
        'provider requests when killed': killedAt,
        'provider requests': stack.fake.received.length,
        'emails accepted': stack.fake.accepted.length,
        'distinct recipients': perRecipient.size,
        duplicates,
        records,
        ...(errors.length ? { 'run errors': errors.slice(0, 3) } : {}),
        'seconds to all runs finished': Math.round((Date.now() - t0) / 1000),
      });
    } finally {
      await stack.close();
    }
  },
};
