import type { EventAudience, Webhooks } from '../core/webhooks/index.ts';

/**
 * What a run's last step says about the run's `workflow.completed` event:
 * whether any enabled endpoint of the run's company (organization, mode)
 * subscribes to it. workflows/report-outcome.ts skips the event's local
 * activity when none does, which saves one of a welcome run's five workflow
 * activations (docs/webhooks.md says when the list is read).
 */
export interface OutcomeHint {
  outcomeHeard: boolean;
}

/** Whether an endpoint of `audience` would get a `workflow.completed` event now. */
export type OutcomeHeard = (audience: EventAudience) => Promise<boolean>;

/** The endpoints' list as every emitter reads it (cached for at most a second, subscriptions.ts). */
export function outcomeHeardBy(webhooks: Pick<Webhooks, 'subscriptions'>): OutcomeHeard {
  return async (audience) =>
    (await webhooks.subscriptions.matching('workflow.completed', audience)).length > 0;
}

/**
 * `step` as a run's last step: it takes the run's audience as one more
 * argument, runs as before, then answers whether the run's completion is
 * heard. Read after the step, so the answer is as fresh as the run's end
 * allows. A call without an audience (not a run's last step) answers heard.
 */
export function hintsOutcome<A extends unknown[]>(
  step: (...args: A) => Promise<void>,
  heard: OutcomeHeard,
): (...args: [...A, EventAudience]) => Promise<OutcomeHint> {
  return async (...args) => {
    const audience = args.at(-1);
    if (!isAudience(audience)) {
      await step(...(args as unknown[] as A));
      return { outcomeHeard: true };
    }
    await step(...(args.slice(0, -1) as A));
    return { outcomeHeard: await heard(audience) };
  };
}

function isAudience(value: unknown): value is EventAudience {
  if (typeof value !== 'object' || value === null) return false;
  const { companyId, organizationId, test } = value as Record<string, unknown>;
  return (
    (typeof companyId === 'string' || companyId === null) &&
    (typeof organizationId === 'string' || organizationId === null) &&
    typeof test === 'boolean'
  );
}
