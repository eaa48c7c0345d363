import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { commandsDuring as commandsOn, on } from '../../../test/support/commands.ts';
import { startEmailCore, type EmailCore } from '../../../test/support/email-core.ts';
import { createInFlight, IN_FLIGHT_COLLECTION, type InFlightEntry } from './in-flight.ts';

/**
 * The in-flight entries of concurrent sends share their writes (group
 * commit): every entry lands, in fewer commands than entries, and each
 * caller's promise settles only once its own entry is written or removed.
 */
describe('in-flight entries: group-committed adds and removals', () => {
  let core: EmailCore;
  const entries = () => core.database.db.collection<InFlightEntry>(IN_FLIGHT_COLLECTION);

  before(async () => {
    core = await startEmailCore({ name: 'in_flight', monitorCommands: true });
  });
  after(() => core.close());

  /** The commands on `emails_in_flight` sent while `fn` runs. */
  const commandsDuring = async (fn: () => Promise<unknown>) =>
    on(IN_FLIGHT_COLLECTION, await commandsOn(core.database, fn));

  it('50 concurrent adds: all written when they resolve, in fewer inserts; a repeat add stands', async () => {
    const inFlight = createInFlight(core.database.db);
    const ids = Array.from({ length: 50 }, () => randomUUID());
    const since = new Date();
    const inserts = await commandsDuring(async () => {
      await Promise.all(ids.map((id) => inFlight.add(id, since)));
    });
    assert.equal(await entries().countDocuments({ _id: { $in: ids } }), 50);
    assert.ok(inserts.length < 50, `${inserts.length} inserts for 50 entries`);
    // A retried add (the same id) is no error, alone or beside new ones.
    const fresh = randomUUID();
    await Promise.all([inFlight.add(ids[0]!, since), inFlight.add(fresh, since)]);
    assert.equal(await entries().countDocuments({ _id: { $in: [...ids, fresh] } }), 51);

    const deletes = await commandsDuring(async () => {
      await Promise.all([...ids, fresh].map((id) => inFlight.remove(id)));
    });
    assert.equal(await entries().countDocuments({ _id: { $in: [...ids, fresh] } }), 0);
    assert.ok(deletes.length < 51, `${deletes.length} deletes for 51 entries`);
  });
});
