import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { isDuplicateKeyError } from '../../errors.ts';
import { commandsDuring as commandsOn, on } from '../../../test/support/commands.ts';
import { startEmailCore, type EmailCore } from '../../../test/support/email-core.ts';
import { invoiceRecord } from '../../../bench/lib/records.ts';
import { STATUS_RANK, type EmailRecord } from './record.ts';
import { createRecordBatches } from './record-batches.ts';

/**
 * The send path's record inserts and "sent" updates are group-committed on
 * the real database: concurrent sends share commands, and each caller
 * learns its own document's fate (a duplicate `_id` fails that caller alone,
 * as `insertOne` would; the others are written).
 */
describe('record batches: group-committed inserts and sent updates', () => {
  let core: EmailCore;
  const emails = () => core.database.db.collection<EmailRecord>('emails');

  before(async () => {
    core = await startEmailCore({ name: 'record_batches', monitorCommands: true });
  });
  after(() => core.close());

  /** The commands on `emails` sent while `fn` runs. */
  const commandsDuring = async (fn: () => Promise<unknown>) =>
    on('emails', await commandsOn(core.database, fn));

  const pending = (id: string) =>
    invoiceRecord({
      emailId: id,
      to: 'customer@example.com',
      subject: 'Invoice',
      status: 'pending',
      providerId: null,
    });

  it('30 concurrent inserts: all stored, in fewer commands; a duplicate fails only its caller', async () => {
    const batches = createRecordBatches(emails());
    const ids = Array.from({ length: 30 }, () => randomUUID());
    const inserts = await commandsDuring(() => Promise.all(ids.map((id) => batches.insert(pending(id)))));
    assert.equal(await emails().countDocuments({ _id: { $in: ids } }), 30);
    assert.ok(inserts.length < 30, `${inserts.length} inserts for 30 records`);

    // A retried send's record (an id already stored) in the same write as two new ones.
    const fresh = [randomUUID(), randomUUID()];
    const results = await Promise.allSettled([
      batches.insert(pending(fresh[0]!)),
      batches.insert(pending(ids[3]!)),
      batches.insert(pending(fresh[1]!)),
    ]);
    assert.equal(results[0].status, 'fulfilled');
    assert.equal(results[2].status, 'fulfilled');
    assert.equal(results[1].status, 'rejected');
    assert.ok(isDuplicateKeyError((results[1] as PromiseRejectedResult).reason), 'a duplicate-key error');
    assert.equal(await emails().countDocuments({ _id: { $in: fresh } }), 2);
  });

  it('concurrent sent updates: each record updated, in fewer commands', async () => {
    const batches = createRecordBatches(emails());
    const ids: string[] = Array.from({ length: 20 }, () => randomUUID());
    await Promise.all(ids.map((id) => batches.insert(pending(id))));
    const updates = await commandsDuring(() =>
      Promise.all(
        ids.map((id, i) =>
          batches.updateById(id, {
            $set: { provider_id: `provider-${i}` },
            $max: { status_rank: STATUS_RANK.sent },
          }),
        ),
      ),
    );
    assert.ok(updates.length < 20, `${updates.length} updates for 20 records`);
    const stored = await emails()
      .find({ _id: { $in: ids } })
      .toArray();
    assert.equal(stored.length, 20);
    for (const record of stored) {
      assert.equal(record.status_rank, STATUS_RANK.sent);
      assert.equal(record.provider_id, `provider-${ids.indexOf(record._id)}`);
    }
  });
});
