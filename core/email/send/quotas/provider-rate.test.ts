import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { authenticatedAs } from '../../../identity.ts';
import { isMailroomError, type MailroomError } from '../../../errors.ts';
import { exposition } from '../../../metrics.ts';
import { createEmailService } from '../../service.ts';
import type { EmailService } from '../../contract.ts';
import { startEmailCore, type EmailCore } from '../../../../test/support/email-core.ts';
import { welcomeBody } from '../../../../test/support/sample-emails.ts';

/**
 * SENDGRID_MAX_PER_SECOND through the real send core: two EmailService
 * instances (two replicas) on one database, the real SendGrid client, the
 * fake SendGrid over HTTP stamping when each message arrived.
 */
const caller = { companyId: randomUUID(), organizationId: randomUUID(), userId: randomUUID() };
const body = () => welcomeBody({ to: `user-${randomUUID()}@example.com` });
const RATE = 10;

describe('provider rate (SENDGRID_MAX_PER_SECOND), shared by replicas', () => {
  let core: EmailCore;
  let replica: EmailService;
  const arrivals: number[] = [];

  before(async () => {
    core = await startEmailCore({ name: 'rate', env: { SENDGRID_MAX_PER_SECOND: String(RATE) } });
    replica = createEmailService({ db: core.database.db, config: core.config, logger: core.logger });
    core.fake.onAccepted = () => arrivals.push(Date.now());
  });
  after(async () => {
    await replica.close();
    await core.close();
  });
  beforeEach(async () => {
    core.fake.reset();
    arrivals.length = 0;
    // A fresh window: the previous test's counter has expired.
    await new Promise((r) => setTimeout(r, 1_100));
  });

  it('two replicas bulk-sending at once reach SendGrid at the configured rate together, none lost', async () => {
    const bulk = (n: number) => ({ emails: Array.from({ length: n }, body) });
    const started = Date.now();
    const [a, b] = await Promise.all([
      core.email.sendBulk(bulk(20), authenticatedAs(caller)),
      replica.sendBulk(bulk(20), authenticatedAs(caller)),
    ]);
    assert.equal(
      a.sent + b.sent,
      40,
      JSON.stringify([a.results, b.results].flat().filter((r) => !r.success)),
    );
    assert.equal(core.fake.accepted.length, 40, 'each email once');
    // 40 at 10/s are 39 slot intervals apart from the first to the last: 3.9 s at least.
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 3_800, `paced: took ${elapsed} ms`);
    // And evenly: after the first arrivals (their HTTP connections open), 100 ms apart.
    const settled = arrivals.slice(5);
    const achieved = (settled.length - 1) / ((settled.at(-1)! - settled[0]!) / 1000);
    assert.ok(achieved <= RATE * 1.05, `achieved ${achieved.toFixed(2)}/s at a rate of ${RATE}/s`);
    assert.match(
      (await exposition()).body,
      /mailroom_provider_rate_limited_total\{provider="sendgrid",result="waited"\} \d+/,
    );
  });

  it('a single send over the rate waits up to 2 s, then fails rate_limited with Retry-After', async () => {
    const sends = Array.from({ length: RATE * 4 }, () =>
      core.email.send(body(), authenticatedAs(caller)).then(
        () => 'sent',
        (err: unknown) => err,
      ),
    );
    const outcomes = await Promise.all(sends);
    const sent = outcomes.filter((o) => o === 'sent').length;
    const refused = outcomes.filter((o): o is MailroomError => isMailroomError(o));
    // Windows at 0, ~1 s and ~2 s fit the 2 s bound; the rest are refused.
    assert.ok(sent >= RATE * 2 && sent <= RATE * 3 + 2, `sent ${sent}`);
    assert.equal(sent + refused.length, RATE * 4);
    for (const err of refused) {
      assert.equal(err.kind, 'rate_limited');
      assert.equal(err.message, 'sending rate limit reached. try again later.');
      assert.ok(err.retryAfterSeconds! > 0 && err.retryAfterSeconds! <= 1.1, String(err.retryAfterSeconds));
    }
    assert.equal(core.fake.accepted.length, sent, 'a refused send never reached SendGrid');
  });

  it('test-mode sends never wait for the rate', async () => {
    const started = Date.now();
    const test = { ...authenticatedAs(caller), test: true };
    await Promise.all(Array.from({ length: RATE * 3 }, () => core.email.send(body(), test)));
    assert.ok(Date.now() - started < 1_000, `took ${Date.now() - started} ms`);
    assert.equal(core.fake.received.length, 0);
  });
});
