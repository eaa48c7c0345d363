import { randomUUID } from 'node:crypto';
import { DAILY_LIMIT_REACHED } from '../../core/email/email-messages.ts';
import { invoiceBody, welcomeBody } from '../support/sample-emails.ts';
import { Checks } from '../faults/stack.ts';
import type { ScaleCase } from './case.ts';
import { SIGNUP_LIMIT } from './stack.ts';

/**
 * Unauthenticated signup sends (limit SIGNUP_LIMIT per recipient per hour)
 * through the proxy, so consecutive requests go to different gateways.
 * One after another: exactly the limit goes out, whichever gateway counts,
 * because the counters are shared in the database. All at once: still
 * exactly the limit per recipient, as each count is one atomic upsert
 * (MongoDB's are; our FerretDB build locks one document's update, patch 4
 * in infra/ferretdb/README.md; upstream FerretDB let 5 to 10 through). A
 * company's daily sending limit, the same kind of counter, likewise: its
 * sends at once through both gateways stop at exactly the limit.
 */

const SEQUENTIAL = SIGNUP_LIMIT + 3;
const RECIPIENTS = 10;
const BURST = 20;

const anonymous = { headers: { 'content-type': 'application/json' } };
/** A company's daily sending limit, and the sends at once through both gateways that meet it. */
const DAILY_LIMIT = 10;
const DAILY_BURST = 40;

export const signupLimits: ScaleCase = {
  name: 'signup rate limits and a daily sending limit counted across both gateways',
  async run(stack) {
    const check = new Checks();
    const prefix = `signup-${randomUUID().slice(0, 8)}`;
    const send = (to: string) => stack.request('POST', '/api/email/send', welcomeBody({ to }), anonymous);

    const one = `${prefix}-seq@example.com`;
    const sequential = [];
    for (let i = 0; i < SEQUENTIAL; i++) sequential.push(await send(one));
    const sequentialOk = sequential.filter((a) => a.status === 200);
    const sequentialLimited = sequential.filter((a) => a.status === 429).length;

    const bursts = await Promise.all(
      Array.from({ length: RECIPIENTS }, (_, r) =>
        Promise.all(Array.from({ length: BURST }, () => send(`${prefix}-burst-${r}@example.com`))),
      ),
    );
    // A company's daily limit: DAILY_BURST sends at once, half through each gateway.
    const quotaHeaders = await stack.companyWithDailyLimit(DAILY_LIMIT);
    const quotaPrefix = `quota-${randomUUID().slice(0, 8)}`;
    const quotaAnswers = await Promise.all(
      Array.from({ length: DAILY_BURST }, (_, i) =>
        stack.request('POST', '/api/email/send', invoiceBody({ to: `${quotaPrefix}-${i}@example.com` }), {
          headers: quotaHeaders,
        }),
      ),
    );
    const quotaSent = quotaAnswers.filter((a) => a.status === 200);
    const quotaRefused = quotaAnswers.filter(
      (a) => a.status === 429 && a.body['error'] === DAILY_LIMIT_REACHED,
    );
    const acceptedPerRecipient = bursts.map((answers) => answers.filter((a) => a.status === 200).length);
    const other = bursts.flat().filter((a) => a.status !== 200 && a.status !== 429);
    const overshoot = acceptedPerRecipient.map((n) => n - SIGNUP_LIMIT);
    const mail = stack.acceptedFor(prefix);

    check.expect(
      sequentialOk.length === SIGNUP_LIMIT && sequentialLimited === SEQUENTIAL - SIGNUP_LIMIT,
      `one after another: ${sequentialOk.length} sent, ${sequentialLimited} refused (limit ${SIGNUP_LIMIT})`,
    );
    check.expect(
      new Set(sequentialOk.map((a) => a.upstream)).size === 2,
      'the sends within the limit were counted on both gateways',
    );
    check.expect(other.length === 0, `answers other than 200/429: ${other.map((a) => a.status).join(', ')}`);
    check.expect(
      acceptedPerRecipient.every((n) => n === SIGNUP_LIMIT),
      `every recipient got exactly its ${SIGNUP_LIMIT}: ${acceptedPerRecipient.join(', ')}`,
    );
    check.expect(
      quotaSent.length === DAILY_LIMIT && quotaRefused.length === DAILY_BURST - DAILY_LIMIT,
      `daily limit ${DAILY_LIMIT}, ${DAILY_BURST} at once: ${quotaSent.length} sent, ${quotaRefused.length} refused, others ${quotaAnswers
        .filter((a) => a.status !== 200 && a.status !== 429)
        .map((a) => a.status)
        .join(',')}`,
    );
    // Which gateway wins the race for the limit's slots is timing (a clean CI run once saw all
    // ten go through one). What proves the count shared is that each gateway answered more
    // sends than the limit: a count of its own would have let more than the limit through.
    const answeredPerGateway = [0, 1].map((g) => quotaAnswers.filter((a) => a.upstream === g).length);
    check.expect(
      answeredPerGateway.every((n) => n > DAILY_LIMIT),
      `each gateway answered more sends than the daily limit: ${answeredPerGateway.join(', ')}`,
    );
    check.expect(
      stack.acceptedFor(quotaPrefix).size === quotaSent.length,
      'every send within the daily limit is one message at the provider, none beyond it',
    );
    check.expect(
      [...mail.values()].reduce((a, b) => a + b, 0) ===
        sequentialOk.length + acceptedPerRecipient.reduce((a, b) => a + b, 0),
      'every 200 is one message at the provider',
    );
    return check.result({
      limit: SIGNUP_LIMIT,
      'one after another: sent / refused': `${sequentialOk.length} / ${sequentialLimited}`,
      'one after another: gateways that counted': [...new Set(sequentialOk.map((a) => a.upstream))],
      [`${BURST} at once to each of ${RECIPIENTS} recipients: sent each`]: acceptedPerRecipient,
      'overshoot max': Math.max(...overshoot),
      'overshoot mean': overshoot.reduce((a, b) => a + b, 0) / overshoot.length,
      [`daily limit ${DAILY_LIMIT}, ${DAILY_BURST} at once: sent / refused`]: `${quotaSent.length} / ${quotaRefused.length}`,
      'daily limit: gateways that counted': [...new Set(quotaSent.map((a) => a.upstream))],
      'daily limit: sends answered per gateway': answeredPerGateway,
    });
  },
};
