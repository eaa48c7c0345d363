import type { Collection, Db } from 'mongodb';
import { happenedFilter, statusOf, type EmailRecord, type LifecycleSink } from '../email/records/index.ts';
import type { Logger } from '../logger.ts';
import { deliveryKeyOf, type DeliveryStore } from './delivery-store.ts';
import type { Outbox, OutboxDoc } from './outbox.ts';
import type { StartDelivery } from './start-delivery.ts';
import type { EventAudience, Subscriptions } from './subscriptions.ts';
import {
  eventIdOf,
  type EmailEventData,
  type EmailEventType,
  type WebhookPayload,
  type WorkflowEventData,
  type WorkflowEventType,
} from './webhook-events.ts';

/** An entry not settled by its writer is checked against its record once it is this old. */
export const OUTBOX_GRACE_MS = 3000;
/** An entry whose change is still not on the record this long after was never written: dropped. */
export const UNWRITTEN_AFTER_MS = 60_000;
/** How often each process looks for entries left behind (a crash, Temporal unreachable). */
export const RECOVERY_INTERVAL_MS = 2000;
/** Entries handed over at once in the background, per process. */
const CONCURRENCY = 16;

export interface Relay {
  /** The record store's listener (core/email/records/lifecycle.ts). */
  sink: LifecycleSink;
  /** A workflow run of a company ended: written and handed over (the activity that calls this retries). */
  emitWorkflowEvent(
    type: WorkflowEventType,
    audience: EventAudience,
    data: WorkflowEventData,
    at: Date,
  ): Promise<void>;
  /** One recovery pass: entries older than the grace period; resolves with how many were handed over. */
  recover(): Promise<number>;
  /** Recovery every RECOVERY_INTERVAL_MS until stopped. */
  start(): { stop(): Promise<void> };
}

export interface RelayDeps {
  db: Db;
  outbox: Outbox;
  subscriptions: Subscriptions;
  deliveries: DeliveryStore;
  startDelivery: StartDelivery;
  logger: Logger;
}

/**
 * Moves events from the outbox to Temporal: for each entry, reads the record
 * (the change must be on it: `happenedFilter`), builds the payload, and for
 * every endpoint that subscribes creates the delivery and starts its run;
 * then deletes the entry. Entries are handed over right after their change
 * in the process that made it, and any left behind by a recovery pass that
 * every gateway and worker runs. Two processes handing over the same entry
 * create one delivery and one run (both keyed by the event id).
 */
export function createRelay(deps: RelayDeps): Relay {
  const { outbox, subscriptions, deliveries, logger } = deps;
  const emails: Collection<EmailRecord> = deps.db.collection<EmailRecord>('emails');
  let running = 0;
  const queue: Array<() => Promise<void>> = [];

  function inBackground(task: () => Promise<void>) {
    queue.push(task);
    pump();
  }
  function pump() {
    while (running < CONCURRENCY && queue.length > 0) {
      const task = queue.shift()!;
      running++;
      void task()
        .catch((err: unknown) =>
          logger.warn({ err: (err as Error).message }, 'webhook hand-over failed; retried by recovery'),
        )
        .finally(() => {
          running--;
          pump();
        });
    }
  }

  /** Hands one entry over; `writerDone`: its writer finished, so a change not on the record never happened. */
  async function handOver(doc: OutboxDoc, writerDone: boolean): Promise<boolean> {
    let audience: EventAudience;
    let data: EmailEventData | WorkflowEventData;
    if (doc.email_id !== undefined && doc.kind !== undefined) {
      const record = await emails.findOne({
        _id: doc.email_id,
        ...happenedFilter(
          doc.view_key === undefined ? { kind: doc.kind } : { kind: doc.kind, viewKey: doc.view_key },
        ),
      });
      if (!record) {
        if (writerDone || Date.now() - doc.created_at.getTime() > UNWRITTEN_AFTER_MS)
          await outbox.remove([doc._id]);
        return false;
      }
      audience = {
        companyId: record.company_id,
        organizationId: record.organization_id,
        test: record.test === true,
      };
      data = emailEventData(record);
    } else if (doc.audience && doc.data) {
      audience = doc.audience;
      data = doc.data;
    } else {
      await outbox.remove([doc._id]);
      return false;
    }
    const endpoints = await subscriptions.matching(doc.type, audience);
    const payload: WebhookPayload = { type: doc.type, timestamp: doc.at.toISOString(), data };
    const body = JSON.stringify(payload);
    for (const endpoint of endpoints) {
      const deliveryKey = deliveryKeyOf(endpoint._id, doc._id);
      await deliveries.create({
        _id: deliveryKey,
        endpoint_key: endpoint._id,
        event_id: doc._id,
        type: doc.type,
        payload: body,
        status: 'pending',
        attempts: 0,
        last_response_code: null,
        last_error: null,
        last_attempt_at: null,
        next_attempt_at: new Date(),
        created_at: new Date(),
        finished_at: null,
      });
      await deps.startDelivery({
        deliveryKey,
        endpointId: endpoint.id,
        eventId: doc._id,
        companyId: endpoint.company_id,
      });
    }
    await outbox.remove([doc._id]);
    return true;
  }

  const relay: Relay = {
    sink: {
      async intend(changes) {
        const now = new Date();
        const docs: OutboxDoc[] = [];
        for (const change of changes) {
          const type = `email.${change.kind}` as EmailEventType;
          if (!(await subscriptions.wants(type))) continue;
          docs.push({
            _id: eventIdOf(type, change.emailId),
            type,
            at: change.at,
            created_at: now,
            email_id: change.emailId,
            kind: change.kind,
            ...(change.viewKey === undefined ? {} : { view_key: change.viewKey }),
          });
        }
        if (docs.length === 0) return { settled() {} };
        await outbox.add(docs);
        return {
          settled(written) {
            if (!written) inBackground(() => outbox.remove(docs.map((d) => d._id)));
            else for (const doc of docs) inBackground(async () => void (await handOver(doc, true)));
          },
        };
      },
    },

    async emitWorkflowEvent(type, audience, data, at) {
      if (!(await subscriptions.wants(type))) return;
      const doc: OutboxDoc = {
        _id: eventIdOf(type, data.run_id),
        type,
        at,
        created_at: new Date(),
        audience,
        data,
      };
      await outbox.add([doc]);
      // Stored: Temporal being unreachable now is the recovery pass's business, not the run's.
      inBackground(async () => void (await handOver(doc, true)));
    },

    async recover() {
      const stale = await outbox.olderThan(new Date(Date.now() - OUTBOX_GRACE_MS), 100);
      let handed = 0;
      for (const doc of stale) if (await handOver(doc, false)) handed++;
      return handed;
    },

    start() {
      let stopped = false;
      let pass: Promise<unknown> = Promise.resolve();
      const timer = setInterval(() => {
        if (stopped || running > 0) return;
        pass = relay
          .recover()
          .catch((err: unknown) =>
            logger.warn({ err: (err as Error).message }, 'webhook outbox recovery failed; retrying'),
          );
      }, RECOVERY_INTERVAL_MS);
      timer.unref();
      return {
        async stop() {
          stopped = true;
          clearInterval(timer);
          await pass;
        },
      };
    },
  };
  return relay;
}

/** The record as an `email.*` event's `data`. */
export function emailEventData(record: EmailRecord): EmailEventData {
  return {
    email_id: record.email_id,
    status: statusOf(record),
    recipient_email: record.recipient_email,
    template_id: record.template_id,
    subject: record.subject,
    company_id: record.company_id,
    organization_id: record.organization_id,
    user_id: record.user_id,
    tags: record.tags,
    provider: record.provider ?? null,
    provider_id: record.provider_id,
    error: record.error,
    suppressed: (record.suppressed ?? []).map((s) => s.email),
    test: record.test === true,
  };
}
