import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MailroomError } from '../../errors.ts';
import { createLogger } from '../../logger.ts';
import { HandOverFailed } from './hand-over.ts';
import type { MailProvider, OutgoingMail } from './provider.ts';
import { createFailover } from './providers/failover.ts';
import { withRate } from './quotas/rate-gate.ts';
import { outgoingMail } from '../../../test/support/sample-emails.ts';

/** What happened, in order: rate waits, hand-overs, provider calls. */
function recorder() {
  const events: string[] = [];
  const provider = (name: string): MailProvider => ({
    name,
    async send() {
      events.push(`send ${name}`);
      return { providerId: `${name}-1` };
    },
  });
  const rate = (name: string) => ({
    async take() {
      events.push(`wait ${name}`);
    },
  });
  return { events, provider, rate };
}

const mail = (beforeHandOver: () => Promise<void>): OutgoingMail => outgoingMail({ beforeHandOver });

const logger = createLogger('test', { logLevel: 'silent', logPretty: false });

describe('the hand-over of a message to a provider', () => {
  it('a provider with a rate hands over after its wait', async () => {
    const { events, provider, rate } = recorder();
    const gated = withRate(provider('sendgrid'), rate('sendgrid'));
    assert.equal(gated.waitsForRate, true);
    await gated.send(mail(async () => void events.push('mark')));
    assert.deepEqual(events, ['wait sendgrid', 'mark', 'send sendgrid']);
  });

  it('behind failover, a provider without a rate hands over before its call, once per send', async () => {
    const { events, provider, rate } = recorder();
    const failing: MailProvider = {
      name: 'smtp',
      async send() {
        events.push('send smtp');
        throw new MailroomError('transient', 'down');
      },
    };
    const failover = createFailover([failing, withRate(provider('sendgrid'), rate('sendgrid'))], logger);
    assert.equal(failover.waitsForRate, true);
    // Memoized, as the send pipeline's: the record is marked once.
    let marked: Promise<void> | undefined;
    const mark = () =>
      (marked ??= (async () => {
        events.push('mark');
      })());
    await failover.send(mail(mark));
    assert.deepEqual(events, ['mark', 'send smtp', 'wait sendgrid', 'send sendgrid']);
  });

  it('a failed hand-over (the record could not be written) calls no provider', async () => {
    const { events, provider, rate } = recorder();
    const failover = createFailover(
      [withRate(provider('sendgrid'), rate('sendgrid')), provider('smtp')],
      logger,
    );
    const dbDown = new Error('database down');
    await assert.rejects(
      failover.send(
        mail(async () => {
          throw dbDown;
        }),
      ),
      (err: unknown) => err instanceof HandOverFailed && err.reason === dbDown,
    );
    assert.deepEqual(events, ['wait sendgrid']);
  });
});
