import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Webhooks } from '../core/webhooks/index.ts';
import { BATCH_POSTS_AT_ONCE, createWebhookActivities } from './webhooks.ts';

/**
 * A batch's first attempts (the activity, with its webhook dependency
 * stubbed): an endpoint never has more than BATCH_POSTS_AT_ONCE of them open
 * from one worker, whatever the batches, every delivery is still attempted,
 * and each outcome comes back in the batch's order.
 */
describe('attemptWebhookBatch', () => {
  it(`POSTs at most ${BATCH_POSTS_AT_ONCE} of a batch at once, every delivery once, outcomes in order`, async () => {
    let open = 0;
    let mostOpen = 0;
    const attempted: string[] = [];
    const webhooks = {
      async attemptBatched(item: { eventId: string }) {
        open++;
        mostOpen = Math.max(mostOpen, open);
        attempted.push(item.eventId);
        await sleep(5);
        open--;
        // Every third receiver answers 503: that delivery goes on retrying alone.
        return Number(item.eventId.slice(3)) % 3 === 0
          ? { outcome: 'retry' as const, why: 'HTTP 503' }
          : { outcome: 'delivered' as const };
      },
    } as unknown as Webhooks;
    const { attemptWebhookBatch } = createWebhookActivities({ webhooks });
    const deliveries = Array.from({ length: 120 }, (_, i) => ({
      deliveryKey: `endpoint/evt${i}`,
      eventId: `evt${i}`,
      payload: '{}',
    }));
    const outcomes = await attemptWebhookBatch({
      endpointKey: 'endpoint',
      endpointVersion: 1,
      deliveries,
      retry: { initialSeconds: 1, maxSeconds: 60, giveUpSeconds: 3600 },
    });
    assert.equal(mostOpen, BATCH_POSTS_AT_ONCE);
    assert.deepEqual([...attempted].sort(), deliveries.map((d) => d.eventId).sort());
    assert.deepEqual(
      outcomes.map((o) => [o.eventId, o.outcome]),
      deliveries.map((d, i) => [d.eventId, i % 3 === 0 ? 'retry' : 'delivered']),
    );
  });

  it('two batches of one endpoint share its limit; another endpoint has its own', async () => {
    const open = new Map<string, number>();
    const mostOpen = new Map<string, number>();
    const webhooks = {
      async attemptBatched(item: { endpointKey: string }) {
        const now = (open.get(item.endpointKey) ?? 0) + 1;
        open.set(item.endpointKey, now);
        mostOpen.set(item.endpointKey, Math.max(mostOpen.get(item.endpointKey) ?? 0, now));
        await sleep(5);
        open.set(item.endpointKey, open.get(item.endpointKey)! - 1);
        return { outcome: 'delivered' as const };
      },
    } as unknown as Webhooks;
    const { attemptWebhookBatch } = createWebhookActivities({ webhooks });
    const batch = (endpointKey: string, tag: string) => ({
      endpointKey,
      endpointVersion: 1,
      deliveries: Array.from({ length: 80 }, (_, i) => ({
        deliveryKey: `${endpointKey}/${tag}${i}`,
        eventId: `${tag}${i}`,
        payload: '{}',
      })),
      retry: { initialSeconds: 1, maxSeconds: 60, giveUpSeconds: 3600 },
    });
    const results = await Promise.all([
      attemptWebhookBatch(batch('a', 'x')),
      attemptWebhookBatch(batch('a', 'y')),
      attemptWebhookBatch(batch('b', 'z')),
    ]);
    assert.deepEqual(
      results.map((r) => r.length),
      [80, 80, 80],
    );
    assert.equal(mostOpen.get('a'), BATCH_POSTS_AT_ONCE, 'endpoint a: both batches under one limit');
    assert.equal(mostOpen.get('b'), BATCH_POSTS_AT_ONCE, 'endpoint b: a limit of its own');
  });
});
