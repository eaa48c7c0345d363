import type { Collection, Db } from 'mongodb';
import { isDuplicateKeyError, type ErrorKind } from '../errors.ts';
import type { Address } from './addresses.ts';
import type { EmailStatus, EmailStatusValue } from './contract.ts';
import { KeyedLock } from './keyed-lock.ts';

/**
 * The `emails` collection: one document per send, from `pending` to its final
 * status. Every status change is ONE conditional updateOne whose filter lists
 * the statuses it may come from, so concurrent or out-of-order events (a
 * webhook `delivered` racing the send's own `sent`, a pixel open before the
 * delivery event) can never move a record backwards:
 *
 *   pending → sent → delivered → opened          (forward only)
 *   pending → failed                             (terminal)
 *   pending | sent | delivered → bounced         (terminal for delivery)
 *
 * Flags (`delivered`, `opened`, `clicked`) and timestamps are set by a separate
 * unconditional update whatever the status: an open of a bounced message is
 * still an open. Only simple $set/$min updates: FerretDB-compatible.
 */

export interface EmailRecord {
  email_id: string;
  created_at: Date;
  updated_at: Date;
  subject: string;
  recipient_email: string;
  recipient_name: string;
  recipients: { to: Address[]; cc: Address[]; bcc: Address[] };
  status: EmailStatusValue;
  template_id: string;
  opened: boolean;
  delivered: boolean;
  clicked: boolean;
  view_key: string;
  resource_type_ref: string | null;
  resource_id_ref: string | null;
  /** The latest open (seed: "set to the open time when an open is recorded"). */
  time: Date | null;
  company_id: string | null;
  organization_id: string | null;
  user_id: string | null;
  provider_id: string | null;
  /** Why the send failed (or, while pending, why the last attempt failed). */
  error: string | null;
  error_kind: ErrorKind | null;
  idempotency_key?: string;
  /**
   * Keyed sends only: while set and in the future, an attempt is talking to the
   * provider and no other attempt may start (a lease, so a crashed attempt
   * cannot block the key forever).
   */
  attempt_until?: Date | null;
  tags: string[];
  locale: string;
  language: string;
  /**
   * First time of each event. Absent until it happens (not null: `$min` against
   * a stored null would keep the null, BSON orders null before dates).
   */
  sent_at?: Date;
  delivered_at?: Date;
  opened_at?: Date;
  bounced_at?: Date;
}

/** Statuses each target status may be entered from. */
const PREDECESSORS: Record<Exclude<EmailStatusValue, 'pending'>, EmailStatusValue[]> = {
  sent: ['pending'],
  failed: ['pending'],
  delivered: ['pending', 'sent'],
  opened: ['pending', 'sent', 'delivered'],
  bounced: ['pending', 'sent', 'delivered'],
};

/** Statuses that mean the provider accepted the message. */
export const HANDED_OVER: readonly EmailStatusValue[] = ['sent', 'delivered', 'opened', 'bounced'];

export type TrackedEvent = 'delivered' | 'opened' | 'clicked' | 'bounced';

export interface EmailRecords {
  ensureIndexes(): Promise<void>;
  insert(record: EmailRecord): Promise<void>;
  findById(emailId: string): Promise<EmailRecord | null>;
  /**
   * The record id reserved for an idempotency key: the first caller's
   * `candidateId` wins, every later caller gets the same id back.
   */
  reserveIdempotencyKey(key: string, candidateId: string): Promise<string>;
  findIdByIdempotencyKey(key: string): Promise<string | undefined>;
  markSent(emailId: string, providerId: string): Promise<void>;
  markFailed(emailId: string, reason: string, kind: ErrorKind): Promise<boolean>;
  /** Takes the attempt lease of a pending keyed record; false when another attempt holds it. */
  claimAttempt(emailId: string, until: Date): Promise<boolean>;
  /** A failed attempt that will be retried (idempotent sends): stays pending, remembers why. */
  noteAttemptFailed(emailId: string, reason: string, kind: ErrorKind): Promise<void>;
  /** Applies a tracking or provider event; false when no record matches. */
  applyEvent(
    by: { email_id: string } | { view_key: string },
    event: TrackedEvent,
    at?: Date,
  ): Promise<boolean>;
}

export function emailRecords(db: Db): EmailRecords {
  const emails: Collection<EmailRecord> = db.collection<EmailRecord>('emails');
  /**
   * `_id` is the idempotency key, unique by nature. A separate collection
   * instead of a sparse unique index on `emails`, because FerretDB 1.24 has
   * no partial indexes and drops the `sparse` option.
   */
  const keys: Collection<{ _id: string; email_id: string; created_at: Date }> =
    db.collection('email_idempotency');

  const lock = new KeyedLock();

  /** The record's email_id for an event addressed by view key (events lock on the email id). */
  async function resolveId(by: { email_id: string } | { view_key: string }): Promise<string | undefined> {
    if ('email_id' in by) return by.email_id;
    const doc = await emails.findOne(by, { projection: { _id: 0, email_id: 1 } });
    return doc?.email_id;
  }

  async function transition(
    filter: { email_id: string } | { view_key: string },
    to: keyof typeof PREDECESSORS,
    set: Partial<EmailRecord>,
  ) {
    return emails.updateOne(
      { ...filter, status: { $in: PREDECESSORS[to] } },
      { $set: { ...set, status: to } },
    );
  }

  return {
    async ensureIndexes() {
      await emails.createIndex({ email_id: 1 }, { unique: true, name: 'email_id_unique' });
      await emails.createIndex({ view_key: 1 }, { unique: true, name: 'view_key_unique' });
      await emails.createIndex({ provider_id: 1 }, { name: 'provider_id' });
      await emails.createIndex({ company_id: 1, email_id: 1 }, { name: 'company_email' });
    },

    async insert(record) {
      await emails.insertOne({ ...record });
    },

    async findById(emailId) {
      return emails.findOne({ email_id: emailId }, { projection: { _id: 0 } });
    },

    async reserveIdempotencyKey(key, candidateId) {
      try {
        const doc = await keys.findOneAndUpdate(
          { _id: key },
          { $setOnInsert: { email_id: candidateId, created_at: new Date() } },
          { upsert: true, returnDocument: 'after' },
        );
        if (doc) return doc.email_id;
      } catch (err) {
        // Two concurrent upserts of the same _id: the loser reads the winner's id.
        if (!isDuplicateKeyError(err)) throw err;
      }
      const existing = await keys.findOne({ _id: key });
      if (!existing) throw new Error(`idempotency key vanished: ${key}`);
      return existing.email_id;
    },

    async findIdByIdempotencyKey(key) {
      return (await keys.findOne({ _id: key }))?.email_id;
    },

    markSent: (emailId, providerId) =>
      lock.run(emailId, async () => {
        const now = new Date();
        // The provider id is kept even if a webhook event already moved the status on.
        await emails.updateOne(
          { email_id: emailId },
          { $set: { provider_id: providerId, sent_at: now, updated_at: now, error: null, error_kind: null } },
        );
        await transition({ email_id: emailId }, 'sent', { updated_at: now });
      }),

    markFailed: (emailId, reason, kind) =>
      lock.run(emailId, async () => {
        const result = await transition({ email_id: emailId }, 'failed', {
          error: reason,
          error_kind: kind,
          updated_at: new Date(),
        });
        return result.matchedCount > 0;
      }),

    claimAttempt: (emailId, until) =>
      lock.run(emailId, async () => {
        const now = new Date();
        const result = await emails.updateOne(
          {
            email_id: emailId,
            status: 'pending',
            $or: [{ attempt_until: null }, { attempt_until: { $lt: now } }],
          },
          { $set: { attempt_until: until, updated_at: now } },
        );
        return result.modifiedCount > 0;
      }),

    noteAttemptFailed: (emailId, reason, kind) =>
      lock.run(emailId, async () => {
        await emails.updateOne(
          { email_id: emailId, status: 'pending' },
          { $set: { error: reason, error_kind: kind, attempt_until: null, updated_at: new Date() } },
        );
      }),

    async applyEvent(by, event, at = new Date()) {
      const emailId = await resolveId(by);
      if (emailId === undefined) return false;
      return lock.run(emailId, () => applyEventLocked({ email_id: emailId }, event, at));
    },
  };

  async function applyEventLocked(by: { email_id: string }, event: TrackedEvent, at: Date): Promise<boolean> {
    const flags: Partial<EmailRecord> = { updated_at: at };
    const firsts: Partial<Record<'delivered_at' | 'opened_at' | 'bounced_at', Date>> = {};
    if (event === 'delivered') {
      flags.delivered = true;
      firsts.delivered_at = at;
    } else if (event === 'opened' || event === 'clicked') {
      flags.opened = true;
      flags.time = at;
      firsts.opened_at = at;
      if (event === 'clicked') flags.clicked = true;
    } else {
      firsts.bounced_at = at;
    }
    // Flags whatever the status; `$min` keeps the first occurrence's time.
    const found = await emails.updateOne(by, { $set: flags, $min: firsts });
    if (found.matchedCount === 0) return false;
    const target = event === 'clicked' ? 'opened' : event;
    await transition(by, target, { updated_at: at });
    return true;
  }
}

/** The seed's status-response fields, nothing else (never view_key). */
export function toStatus(record: EmailRecord): EmailStatus {
  return {
    email_id: record.email_id,
    created_at: record.created_at.toISOString(),
    subject: record.subject,
    recipient_email: record.recipient_email,
    recipient_name: record.recipient_name,
    status: record.status,
    template_id: record.template_id,
    opened: record.opened,
    delivered: record.delivered,
    resource_type_ref: record.resource_type_ref,
    resource_id_ref: record.resource_id_ref,
  };
}
