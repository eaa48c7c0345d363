import type { Collection, Db } from 'mongodb';
import { happenedFilter, statusOf, type EmailRecord, type LifecycleSink } from '../email/records/index.ts';
import type { Logger } from '../logger.ts';
import { deliveryKeyOf, type DeliveryDoc, type DeliveryStore } from './delivery-store.ts';
import { MAX_DELIVERIES_PER_RUN, MAX_RUN_PAYLOAD_BYTES, type BatchedDelivery } from './delivery-workflow.ts';
import type { EndpointDoc } from './endpoint-store.ts';
import { createGroupCommit } from '../group-commit.ts';
import type { Outbox, OutboxDoc } from './outbox.ts';
import type { StartBatch, StartDelivery } from './start-delivery.ts';
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
/** Entries handed over together at most (one record read each, then one write per step for all). */
const HAND_OVER_BATCH = 250;
/** Outbox entries written together at most (concurrent announcements). */
const ANNOUNCE_BATCH = 100;
/**
 * Hand-overs start at most this often per process: events gathered meanwhile
 * share one batch (fewer writes and Temporal runs), at the cost of this much
 * more lag at most.
 */
const HAND_OVER_INTERVAL_MS = 500;

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
  startBatch: StartBatch;
  logger: Logger;
}

/** An entry to hand over; `record`: its record after the change, when its writer had it (never stored). */
type HandOver = OutboxDoc & { record?: EmailRecord };

/** An outbox entry read against its record: what to deliver, or that it is done with, or not yet. */
type Resolved = { audience: EventAudience; body: string } | 'never-happened' | 'not-yet';

/**
 * Moves events from the outbox to Temporal. Concurrent announcements are
 * written as one insert (group commit), and entries are handed over in
 * batches: each record read by `_id` (the change must be on it:
 * `happenedFilter`) unless its writer answered it (a send's `markSent`
 * returns the record it wrote when somebody listens), one insert of all their deliveries, one `deliverWebhooks`
 * run per endpoint for the deliveries this hand-over created, one delete of
 * the entries. Entries are handed over right after their change in the
 * process that made it, and any left behind by a recovery pass that every
 * gateway and worker runs. A delivery that existed already (two processes
 * handed the same event over, or a hand-over broke off after creating it)
 * gets its own `deliverWebhook` run, keyed by the event id, which sends
 * nothing for a delivery that ended.
 */
export function createRelay(deps: RelayDeps): Relay {
  const { outbox, subscriptions, deliveries, logger } = deps;
  const emails: Collection<EmailRecord> = deps.db.collection<EmailRecord>('emails');
  let handingOver = 0;

  const announcements = createGroupCommit<OutboxDoc>((docs) => outbox.add(docs), ANNOUNCE_BATCH);
  const removals = createGroupCommit<string>((ids) => outbox.remove(ids), HAND_OVER_BATCH);
  /**
   * Removals of announcements whose change was not made (a refused send), by
   * event id, until written. An event id is deterministic: a retry of the
   * same send announces the same id, and its insert would find the old entry
   * (a duplicate, skipped) just before the old removal deleted it, leaving
   * the retry's event outside the outbox. A new announcement of an id waits
   * for its pending removal first.
   */
  const withdrawing = new Map<string, Promise<void>>();

  function withdraw(ids: string[]): Promise<void> {
    const removed = removals.submit(ids);
    for (const id of ids) withdrawing.set(id, removed);
    void removed
      .catch(() => undefined)
      .finally(() => {
        for (const id of ids) if (withdrawing.get(id) === removed) withdrawing.delete(id);
      });
    return removed;
  }

  /** Resolves once no removal of any of `docs`' ids is pending (whether it worked or not). */
  async function afterWithdrawals(docs: readonly OutboxDoc[]): Promise<void> {
    const pending = docs.map((d) => withdrawing.get(d._id)).filter((p) => p !== undefined);
    if (pending.length > 0) await Promise.allSettled(pending);
  }
  const handOvers = createGroupCommit<HandOver>(
    async (docs) => void (await handOver(docs, true)),
    HAND_OVER_BATCH,
    HAND_OVER_INTERVAL_MS,
  );

  function inBackground(work: Promise<unknown>) {
    handingOver++;
    void work
      .catch((err: unknown) =>
        logger.warn({ err: (err as Error).message }, 'webhook hand-over failed; retried by recovery'),
      )
      .finally(() => handingOver--);
  }

  /** `writerDone`: its writer finished, so a change not on the record never happened. */
  async function resolve(doc: HandOver, writerDone: boolean): Promise<Resolved> {
    if (doc.email_id !== undefined && doc.kind !== undefined) {
      // The writer's own answer (its write made the change), else a read that checks it is there.
      const record =
        doc.record ??
        (await emails.findOne({
          _id: doc.email_id,
          ...happenedFilter(
            doc.view_key === undefined ? { kind: doc.kind } : { kind: doc.kind, viewKey: doc.view_key },
          ),
        }));
      if (!record)
        return writerDone || Date.now() - doc.created_at.getTime() > UNWRITTEN_AFTER_MS
          ? 'never-happened'
          : 'not-yet';
      const audience = {
        companyId: record.company_id,
        organizationId: record.organization_id,
        test: record.test === true,
      };
      // `email.sent` is announced while the provider is called: it happened when the record says.
      const at = doc.kind === 'sent' && record.sent_at ? record.sent_at : doc.at;
      return { audience, body: bodyOf(doc, emailEventData(record), at) };
    }
    if (doc.audience && doc.data) return { audience: doc.audience, body: bodyOf(doc, doc.data, doc.at) };
    return 'never-happened';
  }

  /** Hands a batch of entries over; resolves with how many were delivered to Temporal. */
  async function handOver(entries: readonly HandOver[], writerDone: boolean): Promise<number> {
    // A once-per-record event announced twice in the same few milliseconds is one entry.
    const docs = [...new Map(entries.map((doc) => [doc._id, doc])).values()];
    const resolved = await Promise.all(docs.map((doc) => resolve(doc, writerDone)));
    const done: string[] = [];
    const byEndpoint = new Map<string, { endpoint: EndpointDoc; deliveries: DeliveryDoc[] }>();
    const now = new Date();
    let handed = 0;
    for (const [i, doc] of docs.entries()) {
      const event = resolved[i]!;
      if (event === 'not-yet') continue;
      done.push(doc._id);
      if (event === 'never-happened') continue;
      handed++;
      for (const endpoint of await subscriptions.matching(doc.type, event.audience)) {
        const group = byEndpoint.get(endpoint._id) ?? { endpoint, deliveries: [] };
        byEndpoint.set(endpoint._id, group);
        group.deliveries.push(newDelivery(endpoint._id, doc, event.body, now));
      }
    }
    const groups = [...byEndpoint.values()];
    const created = await deliveries.createMany(groups.flatMap((g) => g.deliveries));
    await Promise.all(groups.map((g) => startRuns(g.endpoint, g.deliveries, created)));
    await outbox.remove(done);
    return handed;
  }

  async function startRuns(endpoint: EndpointDoc, list: DeliveryDoc[], created: Set<string>) {
    const fresh = list
      .filter((d) => created.has(d._id))
      .map((d) => ({ deliveryKey: d._id, eventId: d.event_id, payload: d.payload }));
    const target = {
      key: endpoint._id,
      id: endpoint.id,
      companyId: endpoint.company_id,
      version: endpoint.updated_at.getTime(),
    };
    for (const batch of runsOf(fresh)) await deps.startBatch(target, batch);
    for (const d of list)
      if (!created.has(d._id))
        await deps.startDelivery({
          deliveryKey: d._id,
          endpointId: endpoint.id,
          eventId: d.event_id,
          companyId: endpoint.company_id,
        });
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
        await afterWithdrawals(docs);
        await announcements.submit(docs);
        return {
          wantsRecord: true,
          settled(written, record) {
            const withRecord = (doc: OutboxDoc): HandOver =>
              record && doc.email_id === record._id ? { ...doc, record } : doc;
            inBackground(written ? handOvers.submit(docs.map(withRecord)) : withdraw(docs.map((d) => d._id)));
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
      await announcements.submit([doc]);
      // Stored: Temporal being unreachable now is the recovery pass's business, not the run's.
      inBackground(handOvers.submit([doc]));
    },

    async recover() {
      const stale = await outbox.olderThan(new Date(Date.now() - OUTBOX_GRACE_MS), HAND_OVER_BATCH);
      return stale.length === 0 ? 0 : handOver(stale, false);
    },

    start() {
      let stopped = false;
      let pass: Promise<unknown> = Promise.resolve();
      const timer = setInterval(() => {
        if (stopped || handingOver > 0) return;
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
          await handOvers.idle();
        },
      };
    },
  };
  return relay;
}

/**
 * A hand-over's new deliveries to one endpoint, cut into runs of at most
 * MAX_DELIVERIES_PER_RUN and MAX_RUN_PAYLOAD_BYTES of bodies (a run's input,
 * and its first activity's, are stored whole in its history).
 */
export function runsOf(deliveries: readonly BatchedDelivery[]): BatchedDelivery[][] {
  const runs: BatchedDelivery[][] = [];
  let run: BatchedDelivery[] = [];
  let bytes = 0;
  for (const delivery of deliveries) {
    const size = Buffer.byteLength(delivery.payload);
    if (run.length > 0 && (run.length === MAX_DELIVERIES_PER_RUN || bytes + size > MAX_RUN_PAYLOAD_BYTES)) {
      runs.push(run);
      run = [];
      bytes = 0;
    }
    run.push(delivery);
    bytes += size;
  }
  if (run.length > 0) runs.push(run);
  return runs;
}

const bodyOf = (doc: OutboxDoc, data: EmailEventData | WorkflowEventData, at: Date) =>
  JSON.stringify({ type: doc.type, timestamp: at.toISOString(), data } satisfies WebhookPayload);

function newDelivery(endpointKey: string, doc: OutboxDoc, payload: string, now: Date): DeliveryDoc {
  return {
    _id: deliveryKeyOf(endpointKey, doc._id),
    endpoint_key: endpointKey,
    event_id: doc._id,
    type: doc.type,
    payload,
    status: 'pending',
    attempts: 0,
    last_response_code: null,
    last_error: null,
    last_attempt_at: null,
    next_attempt_at: now,
    created_at: now,
    finished_at: null,
  };
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
