import { randomUUID } from 'node:crypto';
import { invoiceBody } from '../support/sample-emails.ts';
import { Checks } from '../faults/stack.ts';
import type { ScaleCase } from './case.ts';
import type { Answer, ScaleStack } from './stack.ts';

/**
 * The same Idempotency-Key sent twice at once through the proxy, which hands
 * the two requests to different gateways: send, bulk and a workflow trigger.
 * Expected per key: one provider call, one record, the same answer on both
 * gateways (the key's `_id` in `email_requests` is inserted once, whichever
 * process gets there first; the other waits for its answer).
 */

const SENDS = 20;
const BULKS = 5;
const BULK_ITEMS = 3;
const TRIGGERS = 10;

/** Two requests started together: consecutive requests go to different gateways. */
const pair = (request: () => Promise<Answer>) => Promise.all([request(), request()]);

const sameEmail = ([a, b]: Answer[]) =>
  a!.status === 200 &&
  b!.status === 200 &&
  a!.body['email_id'] === b!.body['email_id'] &&
  a!.body['provider_id'] === b!.body['provider_id'];

export const idempotency: ScaleCase = {
  name: 'same Idempotency-Key at both gateways at once: send, bulk, trigger',
  async run(stack: ScaleStack) {
    const check = new Checks();
    const tag = randomUUID().slice(0, 8);
    // The first request is still talking to the provider when the second arrives.
    stack.fake.delayMs = 300;
    try {
      const sendPrefix = `idem-send-${tag}`;
      const sends = await Promise.all(
        Array.from({ length: SENDS }, (_, i) => {
          const headers = stack.headers({ 'idempotency-key': `${sendPrefix}-${i}` });
          const body = invoiceBody({ to: `${sendPrefix}-${i}@example.com` });
          return pair(() => stack.request('POST', '/api/email/send', body, { headers }));
        }),
      );
      const bulkPrefix = `idem-bulk-${tag}`;
      const bulks = await Promise.all(
        Array.from({ length: BULKS }, (_, i) => {
          const headers = stack.headers({ 'idempotency-key': `${bulkPrefix}-${i}` });
          const emails = Array.from({ length: BULK_ITEMS }, (_, j) =>
            invoiceBody({ id: `item-${j}`, to: `${bulkPrefix}-${i}-${j}@example.com` }),
          );
          return pair(() => stack.request('POST', '/api/email/bulk', { emails, batchDelay: 0 }, { headers }));
        }),
      );
      const users = await stack.insertUsers(`idem-run-${tag}`, TRIGGERS);
      const triggers = await Promise.all(
        users.map((userId, i) => {
          const headers = stack.headers({ 'idempotency-key': `idem-run-${tag}-${i}` });
          return pair(() =>
            stack.request('POST', '/api/workflow/send-welcome-email', { userId }, { headers }),
          );
        }),
      );
      const runIds = [...new Set(triggers.flat().map((t) => String(t.body['runId'])))];
      const runs = await stack.waitForRuns(runIds, 120_000);

      const split = (answers: Answer[][]) => answers.filter(([a, b]) => a!.upstream !== b!.upstream).length;
      const sendMail = stack.acceptedFor(sendPrefix);
      const bulkMail = stack.acceptedFor(bulkPrefix);
      const runMail = stack.acceptedFor(`idem-run-${tag}`);
      const figures = {
        'send pairs split over both gateways': `${split(sends)}/${SENDS}`,
        'send pairs with one answer': sends.filter(sameEmail).length,
        'send provider calls': [...sendMail.values()].reduce((a, b) => a + b, 0),
        'send records': (await stack.recordsFor(sendPrefix)).length,
        'bulk pairs split over both gateways': `${split(bulks)}/${BULKS}`,
        'bulk provider calls': [...bulkMail.values()].reduce((a, b) => a + b, 0),
        'bulk records': (await stack.recordsFor(bulkPrefix)).length,
        'trigger pairs split over both gateways': `${split(triggers)}/${TRIGGERS}`,
        'distinct runs': runIds.length,
        'runs completed': [...runs.values()].filter((r) => r.status === 'completed').length,
        'run emails': [...runMail.values()].reduce((a, b) => a + b, 0),
      };
      check.expect(split(sends) === SENDS, 'every send pair reached both gateways');
      check.expect(figures['send pairs with one answer'] === SENDS, 'both answers of each send key agree');
      check.expect(
        sendMail.size === SENDS && [...sendMail.values()].every((n) => n === 1),
        'one provider call per send key',
      );
      check.expect(
        figures['send records'] === SENDS,
        `${figures['send records']} records for ${SENDS} send keys`,
      );
      check.expect(split(bulks) === BULKS, 'every bulk pair reached both gateways');
      for (const [a, b] of bulks) {
        check.expect(a!.status === 200 && b!.status === 200, `bulk answers ${a!.status}/${b!.status}`);
        check.expect(
          JSON.stringify(a!.body['results']) === JSON.stringify(b!.body['results']),
          'both answers of a bulk key list the same results',
        );
      }
      check.expect(
        bulkMail.size === BULKS * BULK_ITEMS && [...bulkMail.values()].every((n) => n === 1),
        'one provider call per bulk item',
      );
      check.expect(figures['bulk records'] === BULKS * BULK_ITEMS, `${figures['bulk records']} bulk records`);
      check.expect(split(triggers) === TRIGGERS, 'every trigger pair reached both gateways');
      check.expect(
        triggers.every(([a, b]) => a!.status === 202 && a!.body['runId'] === b!.body['runId']),
        'both triggers of a key answer 202 with the same runId',
      );
      check.expect(runIds.length === TRIGGERS, `${runIds.length} runs for ${TRIGGERS} trigger keys`);
      check.expect(figures['runs completed'] === TRIGGERS, `${figures['runs completed']} runs completed`);
      check.expect(
        runMail.size === TRIGGERS && [...runMail.values()].every((n) => n === 1),
        'one email per run',
      );
      return check.result(figures);
    } finally {
      stack.fake.delayMs = 0;
    }
  },
};
