import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { invoiceBody, useEmailApp } from '../../../test/support/email-app.ts';

/** SENDGRID_MAX_PER_SECOND over HTTP: sends past the rate for longer than 2 s answer 429 with Retry-After. */
describe('provider rate over HTTP', () => {
  const app = useEmailApp({ env: { SENDGRID_MAX_PER_SECOND: '2' } });

  it('a burst beyond what 2 s of the rate can take: the rest 429 with Retry-After, never sent', async () => {
    const answers = await Promise.all(
      Array.from({ length: 12 }, () =>
        app.post('/api/email/send', invoiceBody({ to: `r-${randomUUID()}@example.com` })),
      ),
    );
    const sent = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 429);
    assert.equal(sent.length + refused.length, 12, answers.map((a) => a.status).join(','));
    // Slots 0.5 s apart: about five fit in the 2 s a send waits.
    assert.ok(sent.length >= 4 && sent.length <= 6, `sent ${sent.length}`);
    for (const answer of refused) {
      assert.deepEqual(answer.body, {
        success: false,
        error: 'sending rate limit reached. try again later.',
      });
      assert.ok(Number(answer.headers.get('retry-after')) >= 1);
    }
    assert.equal(app.fake.accepted.length, sent.length);
  });
});
