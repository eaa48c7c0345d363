import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { useScratchDatabase } from '../../test/support/scratch-database.ts';
import { createDeliveryStore, deliveryKeyOf, type DeliveryDoc } from './delivery-store.ts';

/** Replays of one delivery on the real database, from several gateway replicas (a store each) at once. */
describe('webhook delivery replays', () => {
  const database = useScratchDatabase('deliveries');

  it('of ten reopens at once exactly one reopens an ended delivery; a pending one is not reopened', async () => {
    const endpointKey = `${randomUUID()}/${randomUUID()}`;
    const eventId = `msg_${randomUUID().replace(/-/g, '')}`;
    const key = deliveryKeyOf(endpointKey, eventId);
    const ended: DeliveryDoc = {
      _id: key,
      endpoint_key: endpointKey,
      event_id: eventId,
      type: 'email.sent',
      payload: '{}',
      status: 'delivered',
      attempts: 1,
      last_response_code: 204,
      last_error: null,
      last_attempt_at: new Date(),
      next_attempt_at: null,
      created_at: new Date(),
      finished_at: new Date(),
    };
    await createDeliveryStore(database.db).createMany([ended]);
    const replicas = Array.from({ length: 10 }, () => createDeliveryStore(database.db));
    const reopened = await Promise.all(replicas.map((store) => store.reopen(key)));
    assert.equal(reopened.filter(Boolean).length, 1, String(reopened));
    const doc = await createDeliveryStore(database.db).get(key);
    assert.equal(doc?.status, 'pending');
    assert.equal(doc?.attempts, 1, 'attempts are history: kept');
    assert.equal(await replicas[0]!.reopen(key), false);
  });
});
