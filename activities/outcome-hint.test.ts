import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { EndpointDoc, EndpointStore } from '../core/webhooks/endpoint-store.ts';
import { createSubscriptions } from '../core/webhooks/subscriptions.ts';
import { hintsOutcome, outcomeHeardBy } from './outcome-hint.ts';

/**
 * A run's last step built with hintsOutcome: it runs as before, then says
 * whether an enabled endpoint of the run's company, organization and mode
 * subscribes to `workflow.completed` (the subscriptions' real matching, over
 * a fixed list of endpoints).
 */
const endpoint = (fields: Partial<EndpointDoc>): EndpointDoc =>
  ({
    company_id: 'c-1',
    organization_id: null,
    test: false,
    events: ['workflow.completed'],
    enabled: true,
    ...fields,
  }) as EndpointDoc;

function stepWith(endpoints: EndpointDoc[]) {
  const store = { enabled: async () => endpoints } as unknown as EndpointStore;
  const calls: unknown[][] = [];
  const step = hintsOutcome(
    async (userId: string, companyId: string | undefined) => {
      calls.push([userId, companyId]);
    },
    outcomeHeardBy({ subscriptions: createSubscriptions(store) }),
  );
  return { step, calls };
}

const audience = { companyId: 'c-1', organizationId: 'o-1', test: false };

describe('hintsOutcome (a run’s last step)', () => {
  it('runs the step with its own arguments, then says whether the company hears workflow.completed', async () => {
    const { step, calls } = stepWith([endpoint({})]);
    assert.deepEqual(await step('u-1', 'c-1', audience), { outcomeHeard: true });
    assert.deepEqual(calls, [['u-1', 'c-1']]);
  });

  it('says unheard for endpoints of another company, mode or organization, or of other events', async () => {
    const others = [
      endpoint({ company_id: 'c-2' }),
      endpoint({ test: true }),
      endpoint({ organization_id: 'o-2' }),
      endpoint({ events: ['workflow.failed', 'email.sent'] }),
    ];
    assert.deepEqual(await stepWith(others).step('u-1', 'c-1', audience), { outcomeHeard: false });
    assert.deepEqual(await stepWith([]).step('u-1', 'c-1', audience), { outcomeHeard: false });
    // An endpoint of the company for every organization hears an organization's run.
    assert.deepEqual(await stepWith([endpoint({ organization_id: null })]).step('u-1', 'c-1', audience), {
      outcomeHeard: true,
    });
  });

  it("a step that answers something (the EIN run's send) answers it with the hint beside it", async () => {
    const send = hintsOutcome(
      async (request: { to: string }) => ({ emailId: `e-${request.to}`, providerId: 'p-1' }),
      async () => false,
    );
    assert.deepEqual(await send({ to: 'a' }, audience), {
      emailId: 'e-a',
      providerId: 'p-1',
      outcomeHeard: false,
    });
  });

  it('a failing step throws and says nothing; a call without an audience says heard', async () => {
    const failing = hintsOutcome(
      async () => {
        throw new Error('database down');
      },
      async () => false,
    );
    await assert.rejects(failing(audience), /database down/);
    const { step, calls } = stepWith([]);
    const withoutAudience = step as unknown as (...args: unknown[]) => Promise<unknown>;
    assert.deepEqual(await withoutAudience('u-1', 'c-1'), { outcomeHeard: true });
    assert.deepEqual(calls, [['u-1', 'c-1']], 'every argument reaches the step');
  });
});
