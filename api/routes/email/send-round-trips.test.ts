import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { commandsDuring as commandsOn } from '../../../test/support/commands.ts';
import { invoiceBody, useEmailApp } from '../../../test/support/email-app.ts';

/**
 * What one send costs the database: after the first send to an address, a
 * send within the suppression check's cache time (core/email/suppressions/
 * check-cache.ts) makes the floor's two writes and nothing else (its
 * in-flight entry is its block's, core/email/records/id-blocks.ts, shared by
 * the sends of a second); a suppression added in between still applies to
 * the very next send.
 */
describe('POST /api/email/send: database round trips', () => {
  const app = useEmailApp({ monitorCommands: true });

  const commandsDuring = (fn: () => Promise<unknown>) => commandsOn(app.database, fn);

  const send = (to: string) => app.post('/api/email/send', invoiceBody({ to }));

  it("a repeat send to the same recipient: the floor's two writes only", async () => {
    const to = 'repeat@example.com';
    const first = await commandsDuring(async () => assert.equal((await send(to)).status, 200));
    assert.ok(first.includes('find suppressions'), `first send checks the list: ${first.join(', ')}`);
    const again = await commandsDuring(async () => assert.equal((await send(to)).status, 200));
    assert.ok(!again.includes('find suppressions'), `answered from the cache: ${again.join(', ')}`);
    // The record's two writes, as the floor's. Its in-flight entry is its id's block's
    // (core/email/records/id-blocks.ts), written by an earlier send unless that block ran out
    // or aged (a second has passed): then one insert of a new block, and the old one's removal.
    assert.deepEqual(
      again.filter((command) => command.endsWith(' emails')),
      ['insert emails', 'update emails'],
    );
    const others = again.filter((command) => !command.endsWith(' emails'));
    assert.ok(
      others.filter((c) => c === 'insert emails_in_flight').length <= 1 &&
        others.every((c) => c === 'insert emails_in_flight' || c === 'delete emails_in_flight'),
      `nothing but the record: ${again.join(', ')}`,
    );
  });

  it('ten sends at once share a few block entries instead of ten entries of their own', async () => {
    const commands = await commandsDuring(async () => {
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => send(`burst-${i}@example.com`)));
      for (const answer of answers) assert.equal(answer.status, 200);
    });
    // A block starts at 4 ids and doubles when it runs out: 4 + 8 + 16 ids cover any ten sends.
    const entries = commands.filter((c) => c === 'insert emails_in_flight');
    assert.ok(
      entries.length <= 3,
      `${entries.length} in-flight inserts for 10 sends: ${commands.join(', ')}`,
    );
  });

  it('a suppression added through the API applies to the next send at once', async () => {
    const to = 'soon-suppressed@example.com';
    assert.equal((await send(to)).status, 200);
    const added = await app.post('/api/email/suppressions', { email: to });
    assert.equal(added.status, 201);
    const refused = await send(to);
    assert.equal(refused.status, 400);
    assert.match(
      String(refused.body['error']),
      /^all recipients are suppressed: soon-suppressed@example\.com/,
    );
    const removed = await app.delete(`/api/email/suppressions/${to}`);
    assert.equal(removed.status, 200);
    assert.equal((await send(to)).status, 200);
  });
});
