import { Checks, Stack, failedUnsent, type FaultCase } from './stack.ts';
import { until } from '../support/until.ts';

/**
 * Case 1: 100 welcome runs in flight, the worker SIGKILLed three times (each
 * time once more sends have reached the provider) and restarted at once.
 * Expected: every run completed with exactly one email accepted by the
 * provider for its user, no record left pending. The one exception is the
 * documented at-most-once window (docs/guarantees.md): a worker killed after
 * its send marked the record and before the request reached the provider
 * leaves a run failed "outcome unknown" with nothing sent and nothing resent.
 * Such a run is allowed only when the provider never received its user's
 * message, and at most as many as were in flight at the kills
 * (SENDS_IN_FLIGHT each); a run failed although its email went out fails the
 * case.
 */
const SENDS_IN_FLIGHT = 20;
export const workerKilled: FaultCase = {
  id: 1,
  name: 'worker SIGKILLed 3x during 100 welcome runs',
  async run(servers) {
    const stack = await new Stack(servers, 'case1').start();
    const check = new Checks();
    try {
      const t0 = Date.now();
      // The provider takes 2 s: 20 concurrent sends, 100 emails take 10 s or more.
      stack.fake.delayMs = 2000;
      const users = await stack.insertUsers(100);
      const triggering = stack.triggerWelcome(users);
      const killedAt: number[] = [];
      // Each kill once the live worker has itself got 15 more sends to the provider.
      let next = 10;
      for (let kill = 0; kill < 3; kill++) {
        await until(`${next} provider requests`, async () => stack.fake.received.length >= next, 180_000, 50);
        const [victim] = stack.workers;
        if (victim) await stack.killWorker(victim);
        killedAt.push(stack.fake.received.length);
        next = stack.fake.received.length + 15;
        await stack.startWorker();
      }
      const runIds = await triggering;
      const { runs, completed, perRecipient, duplicates } = await stack.welcomeOutcome(
        runIds,
        users,
        300_000,
      );
      const records = await stack.recordsByStatus();
      const errors = [...runs.values()].filter((r) => r.status !== 'completed').map((r) => r.error);
      const received = new Set(stack.fake.received.map((m) => m.body.personalizations[0]?.to[0]?.email));
      const neverSent = users.filter((user, i) =>
        failedUnsent(runs.get(runIds[i]!), `${user}@example.com`, received),
      );
      check.expect(
        completed + neverSent.length === 100 && neverSent.length <= SENDS_IN_FLIGHT * killedAt.length,
        `${completed}/100 runs completed, ${neverSent.length} failed "outcome unknown" with nothing sent`,
      );
      check.expect(
        stack.fake.accepted.length === completed,
        `${stack.fake.accepted.length} emails accepted for ${completed} completed runs`,
      );
      check.expect(perRecipient.size === completed, `${perRecipient.size} distinct recipients`);
      check.expect(duplicates === 0, `${duplicates} recipients got more than one email`);
      check.expect(!records['pending'], `${records['pending']} records left pending`);
      return check.result({
        runs: runIds.length,
        completed,
        failed: [...runs.values()].filter((r) => r.status === 'failed').length,
        'failed "outcome unknown", killed before the provider call (nothing sent)': neverSent.length,
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
