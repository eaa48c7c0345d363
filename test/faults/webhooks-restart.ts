import { randomUUID } from 'node:crypto';
import { invoiceBody } from '../support/sample-emails.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';
import { Checks, Stack, killServer, sleep, startTemporalServer, type FaultCase } from './stack.ts';
import { until } from '../support/until.ts';

const BEFORE = 20;
const DURING = 10;
const DOWN_MS = 8_000;

/**
 * Case 8: outbound webhooks across a restart of what delivers them. An
 * endpoint subscribed to `email.sent`, whose receiver fails its first 5
 * requests; 20 sends, then the worker is SIGKILLed and Temporal killed
 * mid-delivery; 10 more sends while both are down (answered at once: a send
 * does not wait for Temporal, its event waits in the outbox). Temporal
 * restarts on the same history file, a new worker starts. Expected: every
 * send answered 200, and every one of the 30 emails' `email.sent` received,
 * each under exactly one `webhook-id`.
 */
export const webhooksRestart: FaultCase = {
  id: 8,
  name: 'outbound webhooks across a worker and Temporal restart',
  async run(servers) {
    const receiver = await new WebhookReceiver().start();
    const stack = await new Stack(servers, 'case8').start();
    const check = new Checks();
    try {
      receiver.failNext = 5;
      const registered = await stack.request('POST', '/api/webhooks', {
        url: receiver.url,
        events: ['email.sent'],
      });
      if (registered.status !== 201) throw new Error(`registration answered ${registered.status}`);
      const send = async () => {
        const res = await stack.request(
          'POST',
          '/api/email/send',
          invoiceBody({ to: `case8-${randomUUID().slice(0, 8)}@example.com` }),
        );
        return { status: res.status, emailId: String(res.body['email_id']), ms: res.ms };
      };
      const before = [];
      for (let i = 0; i < BEFORE; i++) before.push(await send());
      await until('a first delivery', async () => receiver.received.length >= 1, 60_000, 50);

      for (const worker of [...stack.workers]) await stack.killWorker(worker);
      await killServer(servers.temporal);
      const during = [];
      for (let i = 0; i < DURING; i++) during.push(await send());
      await sleep(DOWN_MS);
      servers.temporal = await startTemporalServer(servers, servers.temporalPort);
      await stack.startWorker();

      const sends = [...before, ...during];
      const accepted = sends.filter((s) => s.status === 200).map((s) => s.emailId);
      const idsOf = (emailId: string) =>
        new Set(
          receiver
            .of('email.sent')
            .filter((r) => r.json.data['email_id'] === emailId)
            .map((r) => String(r.headers['webhook-id'])),
        );
      await until(
        'every email.sent received',
        async () => accepted.every((id) => idsOf(id).size > 0),
        180_000,
        500,
      );
      await sleep(3_000);
      const oneId = accepted.filter((id) => idsOf(id).size === 1).length;
      check.expect(
        sends.every((s) => s.status === 200),
        `send answers: ${[...new Set(sends.map((s) => s.status))]}`,
      );
      check.expect(
        oneId === accepted.length,
        `${oneId}/${accepted.length} emails' email.sent under exactly one webhook-id`,
      );
      return check.result({
        'sent before the kill': before.length,
        'sent while Temporal was down (status, ms)': during.map((d) => [d.status, d.ms]),
        'email.sent received (distinct emails)': accepted.filter((id) => idsOf(id).size > 0).length,
        'requests received (retries included)': receiver.received.length,
        'emails with exactly one webhook-id': oneId,
      });
    } finally {
      await stack.close();
      await receiver.stop();
    }
  },
};
