import type { EventAudience, Webhooks } from '../core/webhooks/index.ts';

/**
 * What a run's last step says about the run's `workflow.completed` event:
 * whether any enabled endpoint of the run's company (organization, mode)
 * subscribes to it. workflows/report-outcome.ts skips the event's activity
 * when none does, which saves a welcome or EIN run a round trip through the
 * Temporal server (docs/webhooks.md says when the list is read).
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

/** A step's result with the hint beside it (a step that answers nothing answers the hint alone). */
export type Hinted<R> = (R extends object ? R : unknown) & OutcomeHint;

/**
 * `step` as a run's last step: it takes the run's audience as one more
 * argument, runs as before, then answers its result and whether the run's
 * completion is heard. Read after the step, so the answer is as fresh as the
 * run's end allows. A call without an audience (not a run's last step, or a
 * history recorded before the step took one) answers heard.
 */
export function hintsOutcome<A extends unknown[], R extends object | void>(
  step: (...args: A) => Promise<R>,
  heard: OutcomeHeard,
): (...args: [...A, EventAudience]) => Promise<Hinted<R>> {
  return async (...args) => {
    const audience = args.at(-1);
    const hinted = (result: R, outcomeHeard: boolean) => ({ ...result, outcomeHeard }) as Hinted<R>;
    if (!isAudience(audience)) return hinted(await step(...(args as unknown[] as A)), true);
    const result = await step(...(args.slice(0, -1) as A));
    return hinted(result, await heard(audience));
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
