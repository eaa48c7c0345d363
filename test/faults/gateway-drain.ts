import { Checks, Stack, type FaultCase } from './stack.ts';

/**
 * Case 5: the gateway SIGTERMed while 30 HTTP sends are in flight (the
 * provider takes 1 s). Every request already accepted completes with its
 * answer (graceful drain), the process exits 0, no record is left pending,
 * and the provider received exactly the sends that were answered.
 */
export const gatewayDrain: FaultCase = {
  id: 5,
  name: 'gateway SIGTERMed under send load',
  async run(servers) {
    const stack = await new Stack(servers, 'case5').start();
    const check = new Checks();
    try {
      stack.fake.delayMs = 1000;
      const sent = await stack.sendsAtProvider(30, 'drain');
      const gateway = stack.gateway!;
      const t0 = Date.now();
      process.kill(gateway.pid, 'SIGTERM');
      const answers = await sent.answers;
      const exit = await gateway.spawned.exited;
      const drainMs = Date.now() - t0;
      const refused = await fetch(`${stack.gatewayUrl}/health`).then(
        () => false,
        () => true,
      );
      const records = await stack.recordsByStatus();
      const ok = answers.filter((a) => a.status === 200).length;
      check.expect(ok === 30, `${ok}/30 in-flight sends answered 200`);
      check.expect(exit.code === 0, `gateway exit ${JSON.stringify(exit)}`);
      check.expect(refused, 'the stopped gateway no longer answers');
      check.expect(!records['pending'], `${records['pending']} records left pending`);
      check.expect(
        stack.fake.received.length === ok,
        `${stack.fake.received.length} provider calls for ${ok} answers`,
      );
      return check.result({
        'sends in flight at SIGTERM': 30,
        'answered 200': ok,
        'other answers': answers.filter((a) => a.status !== 200).map((a) => a.status),
        'drain ms (SIGTERM to exit)': drainMs,
        'gateway exit': exit,
        'provider calls': stack.fake.received.length,
        records,
      });
    } finally {
      await stack.close();
    }
  },
};
