import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { invoiceBody, useEmailApp } from '../../../test/support/email-app.ts';

/**
 * Templates that invite a reply ("reply to this email or contact Acme
 * directly") say so only when a reply reaches someone: the send's
 * reply_to, EMAIL_REPLY_TO, or a sender other than the default no-reply one.
 */
const partsOf = (body: { content: Array<{ type: string; value: string }> }) => ({
  text: body.content.find((c) => c.type === 'text/plain')!.value,
  html: body.content.find((c) => c.type === 'text/html')!.value,
});

describe('reply wording and Reply-To, default configuration (no EMAIL_REPLY_TO)', () => {
  const app = useEmailApp();

  it('from the no-reply default sender without reply_to: no Reply-To, no invitation to reply', async () => {
    const res = await app.post('/api/email/send', invoiceBody());
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const sent = app.fake.accepted[0]!.body;
    assert.equal(sent.reply_to, undefined);
    const { text, html } = partsOf(sent);
    assert.doesNotMatch(text + html, /reply to this email/);
    assert.match(text, /contact .+ directly\./);
  });

  it('with reply_to: the Reply-To header, and the invitation to reply', async () => {
    const res = await app.post('/api/email/send', invoiceBody({ reply_to: 'billing@acme.example' }));
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const sent = app.fake.accepted[0]!.body;
    assert.deepEqual(sent.reply_to, { email: 'billing@acme.example' });
    assert.match(partsOf(sent).text, /reply to this email or contact .+ directly\./);
  });
});

describe('reply wording and Reply-To, with EMAIL_REPLY_TO', () => {
  const app = useEmailApp({ env: { EMAIL_REPLY_TO: 'Acme Help <help@acme.example>' } });

  it('a send naming no reply_to gets the configured one, and invites a reply', async () => {
    const res = await app.post('/api/email/send', invoiceBody());
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const sent = app.fake.accepted[0]!.body;
    assert.deepEqual(sent.reply_to, { email: 'help@acme.example', name: 'Acme Help' });
    assert.match(partsOf(sent).text, /reply to this email/);
  });

  it("a send's own reply_to wins", async () => {
    const res = await app.post('/api/email/send', invoiceBody({ reply_to: 'billing@acme.example' }));
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(app.fake.accepted[0]!.body.reply_to, { email: 'billing@acme.example' });
  });
});
