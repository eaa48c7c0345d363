import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { fromNotAllowed } from '../../../core/email/email-messages.ts';
import { invoiceBody, useEmailApp } from '../../../test/support/email-app.ts';
import { companyWithKey, keysCommand } from '../../../test/support/company-keys.ts';

/**
 * Which `from` a company may send as, in AUTH_MODE=api-key: the default
 * sender, ALLOWED_SENDERS, and the company's own list set by the operator's
 * real command (`npm run keys -- senders`, a process on the same database).
 * Anything else is 403 before anything is recorded or sent.
 */
describe('from addresses a company may use (api-key mode)', () => {
  const app = useEmailApp({ env: { AUTH_MODE: 'api-key', ALLOWED_SENDERS: 'shared.example' } });

  const company = () => companyWithKey(app);
  const sendersCommand = (...args: string[]) => keysCommand(app, 'senders', ...args);

  const sendFrom = (auth: Record<string, string>, from: string) =>
    app.post('/api/email/send', invoiceBody({ to: `r-${randomUUID()}@example.com`, from }), auth);

  it("another company's (or anybody's) address is 403, nothing recorded or sent", async () => {
    const a = await company();
    const res = await sendFrom(a.auth, 'CEO <ceo@bank.example>');
    assert.equal(res.status, 403, JSON.stringify(res.body));
    assert.deepEqual(res.body, { success: false, error: fromNotAllowed('ceo@bank.example') });
    assert.equal(app.fake.received.length, 0);
    assert.equal(await app.database.db.collection('emails').countDocuments({ company_id: a.id }), 0);
  });

  it('the default sender (any display name) and ALLOWED_SENDERS go for every company', async () => {
    const a = await company();
    const own = await sendFrom(a.auth, 'Acme via Mailroom <NO-REPLY@mailroom.test>');
    assert.equal(own.status, 200, JSON.stringify(own.body));
    const shared = await sendFrom(a.auth, 'billing@Shared.example');
    assert.equal(shared.status, 200, JSON.stringify(shared.body));
    // A domain allows its addresses, not its subdomains'.
    assert.equal((await sendFrom(a.auth, 'x@mail.shared.example')).status, 403);
    assert.deepEqual(
      app.fake.accepted.map((m) => m.body.from.email),
      ['NO-REPLY@mailroom.test', 'billing@Shared.example'],
    );
  });

  it('the operator gives a company its own senders; another company still may not use them', async () => {
    const [a, b] = [await company(), await company()];
    const set = await sendersCommand('--company', a.id, '--allow', 'acme.example,billing@other.example');
    assert.equal(set.code, 0, set.out);
    assert.match(set.out, /may also send as: acme\.example, billing@other\.example/);

    assert.equal((await sendFrom(a.auth, 'Acme <invoices@acme.example>')).status, 200);
    assert.equal((await sendFrom(a.auth, 'billing@other.example')).status, 200);
    assert.equal((await sendFrom(a.auth, 'someone@other.example')).status, 403);
    assert.equal((await sendFrom(b.auth, 'invoices@acme.example')).status, 403);

    const bad = await sendersCommand('--company', a.id, '--allow', 'not a domain');
    assert.notEqual(bad.code, 0);
    assert.match(bad.out, /--allow must be a comma list/);
    const removed = await sendersCommand('--company', a.id, '--allow', 'none');
    assert.match(removed.out, /has no senders of its own/);
  });

  it('a scheduled send from a sender not allowed is refused when scheduled', async () => {
    const a = await company();
    const res = await app.post(
      '/api/email/send',
      invoiceBody({ from: 'ceo@bank.example', send_at: new Date(Date.now() + 3_600_000).toISOString() }),
      a.auth,
    );
    assert.equal(res.status, 403, JSON.stringify(res.body));
  });
});
