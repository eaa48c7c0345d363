/**
 * Outbound webhooks: endpoints a company registers, the events the email
 * records and workflow runs produce, the outbox they pass through, and their
 * durable delivery on Temporal (docs/webhooks.md).
 */
import type { Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { attemptBatched, attemptDelivery, type AttemptDeps, type AttemptResult } from './attempt-delivery.ts';
import type { AttemptOutcome } from './delivery-store.ts';
import type { BatchedAttempt } from './delivery-workflow.ts';
import { createEndpointCache } from './endpoint-cache.ts';
import { createGroupCommit } from '../group-commit.ts';
import { createDeliveryStore, ensureDeliveryIndexes, type DeliveryStore } from './delivery-store.ts';
import { createEndpointStore, type EndpointStore } from './endpoint-store.ts';
import { createOutbox, ensureOutboxIndexes } from './outbox.ts';
import { createWebhookPoster } from './post-webhook.ts';
import { createRelay, type Relay } from './relay.ts';
import { temporalBatchStarter, temporalDeliveryStarter, type StartDelivery } from './start-delivery.ts';
import { createSubscriptions, type Subscriptions } from './subscriptions.ts';

export interface Webhooks {
  endpoints: EndpointStore;
  deliveries: DeliveryStore;
  subscriptions: Subscriptions;
  relay: Relay;
  startDelivery: StartDelivery;
  /** One attempt of a delivery by its key (the worker's activity for replays and second hand-overs). */
  attempt(deliveryKey: string, attempt: number): Promise<AttemptResult>;
  /** One attempt of a batched delivery (the worker's activity for first hand-overs). */
  attemptBatched(item: BatchedAttempt, attempt: number): Promise<AttemptResult>;
  ensureIndexes(): Promise<void>;
}

export interface WebhookDeps {
  db: Db;
  config: Config;
  logger: Logger;
  /** The Temporal client, once connected (the gateway connects lazily). */
  temporal: () => Client | undefined;
}

export function createWebhooks(deps: WebhookDeps): Webhooks {
  const endpoints = createEndpointStore(deps.db);
  const deliveries = createDeliveryStore(deps.db);
  const subscriptions = createSubscriptions(endpoints);
  const startDelivery = temporalDeliveryStarter(deps.temporal, deps.config);
  const relay = createRelay({
    db: deps.db,
    outbox: createOutbox(deps.db),
    subscriptions,
    deliveries,
    startDelivery,
    startBatch: temporalBatchStarter(deps.temporal, deps.config),
    logger: deps.logger,
  });
  // Concurrent attempts' results are written together (group commit): one bulk write, not one each.
  const attemptResults = createGroupCommit<{ key: string; outcome: AttemptOutcome }>(
    (results) => deliveries.noteAttempts(results),
    100,
  );
  const attemptDeps: AttemptDeps = {
    deliveries,
    endpoints,
    endpointCache: createEndpointCache(endpoints),
    noteAttempt: (key, outcome) => attemptResults.submit([{ key, outcome }]),
    post: createWebhookPoster(deps.config.webhooks),
    config: deps.config,
  };
  return {
    endpoints,
    deliveries,
    subscriptions,
    relay,
    startDelivery,
    attempt: (deliveryKey, attempt) => attemptDelivery(attemptDeps, deliveryKey, attempt),
    attemptBatched: (item, attempt) => attemptBatched(attemptDeps, item, attempt),
    async ensureIndexes() {
      await ensureDeliveryIndexes(deps.db);
      await ensureOutboxIndexes(deps.db);
    },
  };
}

export { endpointView } from './endpoint-store.ts';
export type { EndpointOwner } from './endpoint-store.ts';
export { endpointUrlProblem } from './endpoint-url.ts';
export { EVENT_TYPES, webhookPayloadSchema } from './webhook-events.ts';
export type { WorkflowEventData, WorkflowEventType } from './webhook-events.ts';
export type { EventAudience } from './subscriptions.ts';
export { ENDPOINT_GONE } from './delivery-workflow.ts';
export type { BatchedAttempt, DeliverWebhooksInput, FirstAttempt } from './delivery-workflow.ts';
