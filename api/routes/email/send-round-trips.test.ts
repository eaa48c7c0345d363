import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { commandsDuring as commandsOn } from '../../../test/support/commands.ts';
import { invoiceBody, useEmailApp } from '../../../test/support/email-app.ts';

/**
 * What one send costs the database: after the first send to an address, a
 * send within the suppression check's cache time (core/email/suppressions/
 * check-cache.ts) makes the floor's two writes and the sweeper's in-flight
 * entry (core/email/records/in-flight.ts) and nothing else; a
 * suppression added in between still applies to the very next send.
 */
describe('POST /api/email/send: database round trips', () => {
  const app = useEmailApp({ monitorCommands: true });

  const commandsDuring = (fn: () => Promise<unknown>) => commandsOn(app.database, fn);

  const send = (to: string) => app.post('/api/email/send', invoiceBody({ to }));

  it('a repeat send to the same recipient: the record and its in-flight entry only', async () => {
    const to = 'repeat@example.com';
    const first = await commandsDuring(async () => assert.equal((await send(to)).status, 200));
    assert.ok(first.includes('find suppressions'), `first send checks the list: ${first.join(', ')}`);
    const again = await commandsDuring(async () => assert.equal((await send(to)).status, 200));
    assert.ok(!again.includes('find suppressions'), `answered from the cache: ${again.join(', ')}`);
    // The record's two writes, and its in-flight entry (for the sweeper) sent beside its insert
    // and removed after the answer: three round trips' wait, as the floor's two writes plus one.
    assert.deepEqual(
      again.filter((command) => command.endsWith(' emails')),
      ['insert emails', 'update emails'],
    );
    // The removal is not awaited by the answer: seen here or just after.
    const others = again.filter((command) => !command.endsWith(' emails'));
    assert.deepEqual(others.slice(0, 1), ['insert emails_in_flight'], 'nothing but the record');
    assert.deepEqual(others.slice(1), others.length > 1 ? ['delete emails_in_flight'] : []);
    assert.ok(
      again.indexOf('insert emails_in_flight') < again.indexOf('update emails'),
      `the entry goes with the insert: ${again.join(', ')}`,
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
