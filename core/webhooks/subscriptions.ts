import type { EndpointDoc, EndpointStore } from './endpoint-store.ts';
import type { EventType } from './webhook-events.ts';

/** How stale the list of enabled endpoints may be in another process (registering one refreshes this one's). */
export const SUBSCRIPTIONS_MAX_AGE_MS = 1000;

export interface EventAudience {
  companyId: string | null;
  organizationId: string | null;
  test: boolean;
}

/**
 * Which endpoints want which events, read from the database at most once a
 * second per process and shared by every caller meanwhile: deciding whether
 * a change needs an outbox entry at all (nobody listening: no write) costs no
 * round trip on the hot paths.
 */
export interface Subscriptions {
  /** Whether any enabled endpoint of any company subscribes to `type`. */
  wants(type: EventType): Promise<boolean>;
  /** The enabled endpoints that get `type` for this company, organization and mode. */
  matching(type: EventType, audience: EventAudience): Promise<EndpointDoc[]>;
  /** Forget what was read (an endpoint was registered or changed in this process). */
  invalidate(): void;
}

export function createSubscriptions(
  store: EndpointStore,
  maxAgeMs = SUBSCRIPTIONS_MAX_AGE_MS,
): Subscriptions {
  let loaded: { at: number; endpoints: Promise<EndpointDoc[]> } | undefined;
  function current(): Promise<EndpointDoc[]> {
    if (!loaded || Date.now() - loaded.at > maxAgeMs) {
      const endpoints = store.enabled();
      loaded = { at: Date.now(), endpoints };
      // A failed read is not kept: the next caller reads again.
      endpoints.catch(() => {
        if (loaded?.endpoints === endpoints) loaded = undefined;
      });
    }
    return loaded.endpoints;
  }
  return {
    wants: async (type) => (await current()).some((e) => e.events.includes(type)),
    async matching(type, audience) {
      return (await current()).filter(
        (e) =>
          e.events.includes(type) &&
          e.company_id === audience.companyId &&
          e.test === audience.test &&
          (e.organization_id === null || e.organization_id === audience.organizationId),
      );
    },
    invalidate() {
      loaded = undefined;
    },
  };
}
