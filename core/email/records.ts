import type { Collection, Db } from 'mongodb';
import { isDuplicateKeyError, type ErrorKind } from '../errors.ts';
import type { Address } from './addresses.ts';
import type { EmailStatus, EmailStatusValue } from './contract.ts';
import { KeyedLock } from './keyed-lock.ts';
import { emailIdOfViewKey, viewKeyMatches } from './view-key.ts';

/**
 * The `emails` collection: one document per send, `_id` = email id.
 *
 * Every runtime read and write filters by `{ _id }` ALONE. Why: FerretDB 1.24's
 * SQLite backend pushes a filter down to SQLite only when it is exactly
 * `{ _id: X }`; any other filter (`{ email_id }`, `{ view_key }`,
 * `{ _id, status: { $in } }`) scans and decodes the whole collection in Go
 * (measured at 5,000 records: ~500 ms per update, against ~36 ms by `_id`).
 * records.test.ts asserts this on the wire.
 *
 * The status is stored as a rank, raised with `$max` in the same `{ _id }`
 * update that sets the event's flags: one atomic update on MongoDB, and the
 * final state does not depend on the order events arrive in:
 *
 *   pending 0 < sent 1 < delivered 2 < opened 3 < bounced 4 < failed 5
 *
 * So a bounce outranks an open whatever came first, and a late `sent` never
 * moves a delivered record back. `failed` is the exception to "highest wins":
 * it only replaces `pending` (markFailed). Flags (`delivered`, `opened`,
 * `clicked`, `time`) are set whatever the status: an open of a bounced message
 * is still an open. Only $set/$min/$max updates: FerretDB-compatible.
 */

export interface EmailRecord {
  /** The email id (FerretDB answers only `{ _id }` filters without a scan). */
  _id: string;
  /** Same value as `_id`: readable in the raw data, unique index on MongoDB. */
  email_id: string;
  created_at: Date;
  updated_at: Date;
  subject: string;
  recipient_email: string;
  recipient_name: string;
  recipients: { to: Address[]; cc: Address[]; bcc: Address[] };
  /** The status as a rank (STATUS_RANK); the status string is derived, never stored. */
  status_rank: number;
  template_id: string;
  opened: boolean;
  delivered: boolean;
  clicked: boolean;
  /** The pixel's key: the email id + 144 random bits (view-key.ts). */
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

/** Higher rank wins (`$max`), except `failed`, which only replaces `pending`. */
export const STATUS_RANK = {
  pending: 0,
  sent: 1,
  delivered: 2,
  opened: 3,
  bounced: 4,
  failed: 5,
} as const satisfies Record<EmailStatusValue, number>;

const STATUS_BY_RANK = Object.fromEntries(
  Object.entries(STATUS_RANK).map(([status, rank]) => [rank, status as EmailStatusValue]),
) as Record<number, EmailStatusValue | undefined>;

export function statusOf(record: Pick<EmailRecord, 'status_rank'>): EmailStatusValue {
  const status = STATUS_BY_RANK[record.status_rank];
  if (status === undefined) throw new Error(`email record with unknown status_rank ${record.status_rank}`);
  return status;
}

/** The provider accepted the message (sent, delivered, opened or bounced). */
export const isHandedOver = (record: Pick<EmailRecord, 'status_rank'>): boolean =>
  record.status_rank >= STATUS_RANK.sent && record.status_rank <= STATUS_RANK.bounced;

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
  /** pending → failed; false (and nothing written) when the record is not pending. */
  markFailed(emailId: string, reason: string, kind: ErrorKind): Promise<boolean>;
  /**
   * Takes the attempt lease of an idempotency key; false when another attempt
   * holds it. A lease (not a flag) so a crashed attempt cannot block the key forever.
   */
  claimAttempt(key: string, until: Date): Promise<boolean>;
  /** Gives the lease back (a failed attempt that will be retried). */
  releaseAttempt(key: string): Promise<void>;
  /** A failed attempt that will be retried (idempotent sends): stays pending, remembers why. */
  noteAttemptFailed(emailId: string, reason: string, kind: ErrorKind): Promise<void>;
  /** Applies a tracking or provider event; false when no record matches. */
  applyEvent(
    by: { email_id: string } | { view_key: string },
    event: TrackedEvent,
    at?: Date,
  ): Promise<boolean>;
}

/** Indexes earlier versions created that no query uses any more (dropped by ensureIndexes). */
const OBSOLETE_INDEXES = ['provider_id', 'company_email'];

interface IdempotencyDoc {
  /** The idempotency key (workflow id + activity id). */
  _id: string;
  email_id: string;
  created_at: Date;
  /** While set and in the future, an attempt is talking to the provider. */
  attempt_until?: Date | null;
}

export function emailRecords(db: Db): EmailRecords {
  const emails: Collection<EmailRecord> = db.collection<EmailRecord>('emails');
  /**
   * `_id` is the idempotency key, unique by nature. A separate collection
   * instead of a sparse unique index on `emails`, because FerretDB 1.24 has
   * no partial indexes and drops the `sparse` option.
   */
  const keys: Collection<IdempotencyDoc> = db.collection('email_idempotency');

  /** Serialises the writes to one email record (see keyed-lock.ts for why). */
  const lock = new KeyedLock();
  /** Serialises the lease updates of one idempotency key (FerretDB's updates are read-modify-write). */
  const keyLock = new KeyedLock();

  /** A pending record's read-then-write (see markFailed for why that is safe). */
  async function updateIfPending(emailId: string, update: Partial<EmailRecord>, rank: number) {
    const current = await emails.findOne({ _id: emailId }, { projection: { status_rank: 1 } });
    if (!current || current.status_rank !== STATUS_RANK.pending) return false;
    await emails.updateOne({ _id: emailId }, { $set: update, $max: { status_rank: rank } });
    return true;
  }

  /** The email id an event is for; a view key must match the stored one exactly. */
  async function resolveId(by: { email_id: string } | { view_key: string }): Promise<string | undefined> {
    if ('email_id' in by) return by.email_id;
    const emailId = emailIdOfViewKey(by.view_key);
    if (emailId === undefined) return undefined;
    const doc = await emails.findOne({ _id: emailId }, { projection: { view_key: 1 } });
    return doc && viewKeyMatches(by.view_key, doc.view_key) ? emailId : undefined;
  }

  return {
    async ensureIndexes() {
      // email_id is `_id` too; this index keeps the readable copy unique on MongoDB.
      await emails.createIndex({ email_id: 1 }, { unique: true, name: 'email_id_unique' });
      // Lookups go by `_id` (the key embeds it); uniqueness is still the database's to guarantee.
      await emails.createIndex({ view_key: 1 }, { unique: true, name: 'view_key_unique' });
      const existing = new Set((await emails.indexes()).map((i) => i.name));
      for (const name of OBSOLETE_INDEXES) if (existing.has(name)) await emails.dropIndex(name);
    },

    async insert(record) {
      await emails.insertOne({ ...record });
    },

    async findById(emailId) {
      return emails.findOne({ _id: emailId });
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
          { _id: emailId },
          {
            $set: { provider_id: providerId, sent_at: now, updated_at: now, error: null, error_kind: null },
            $max: { status_rank: STATUS_RANK.sent },
          },
        );
      }),

    /*
     * Read, then write: `failed` must not replace a status the provider
     * reported, and `$max` alone would let it. A conditional filter would make
     * it atomic but would scan on FerretDB. The read-then-write is acceptable
     * because the only writers to a PENDING record are its own send attempt
     * (one at a time: the in-process lock, and the attempt lease across
     * processes) and the workflow giving up after that attempt. Provider
     * events and opens need a message the provider accepted; the one window
     * left is a send whose answer was lost (the provider has it, the attempt
     * saw an error) AND whose event reaches ANOTHER process between this read
     * and this write (within one process the lock orders them): then `failed`
     * wins, which is what the attempt itself believed anyway.
     */
    markFailed: (emailId, reason, kind) =>
      lock.run(emailId, () =>
        updateIfPending(
          emailId,
          { error: reason, error_kind: kind, updated_at: new Date() },
          STATUS_RANK.failed,
        ),
      ),

    /*
     * The lease lives on the key's `email_idempotency` document. The
     * conditional filter is atomic on MongoDB, so two processes cannot both
     * take it. On FerretDB it is not pushed down (only a bare `{ _id }` is):
     * a scan of `email_idempotency`, which holds only workflow sends, never
     * of `emails`; and FerretDB's updates are read-modify-write, so the
     * in-process lock serialises concurrent claims of one key.
     */
    claimAttempt: (key, until) =>
      keyLock.run(key, async () => {
        const now = new Date();
        const result = await keys.updateOne(
          { _id: key, $or: [{ attempt_until: null }, { attempt_until: { $lt: now } }] },
          { $set: { attempt_until: until } },
        );
        return result.modifiedCount > 0;
      }),

    releaseAttempt: (key) =>
      keyLock.run(key, async () => {
        await keys.updateOne({ _id: key }, { $set: { attempt_until: null } });
      }),

    noteAttemptFailed: (emailId, reason, kind) =>
      lock.run(emailId, async () => {
        // Same read-then-write argument as markFailed; the rank stays pending.
        await updateIfPending(
          emailId,
          { error: reason, error_kind: kind, updated_at: new Date() },
          STATUS_RANK.pending,
        );
      }),

    async applyEvent(by, event, at = new Date()) {
      const emailId = await resolveId(by);
      if (emailId === undefined) return false;
      return lock.run(emailId, () => applyEventLocked(emailId, event, at));
    },
  };

  async function applyEventLocked(emailId: string, event: TrackedEvent, at: Date): Promise<boolean> {
    const flags: Partial<EmailRecord> = { updated_at: at };
    const firsts: Partial<Record<'delivered_at' | 'opened_at' | 'bounced_at', Date>> = {};
    let rank: number;
    if (event === 'delivered') {
      flags.delivered = true;
      firsts.delivered_at = at;
      rank = STATUS_RANK.delivered;
    } else if (event === 'opened' || event === 'clicked') {
      flags.opened = true;
      flags.time = at;
      firsts.opened_at = at;
      if (event === 'clicked') flags.clicked = true;
      rank = STATUS_RANK.opened;
    } else {
      firsts.bounced_at = at;
      rank = STATUS_RANK.bounced;
    }
    // One update: flags whatever the status, `$min` keeps the first occurrence's
    // time, `$max` moves the status forward only.
    const found = await emails.updateOne(
      { _id: emailId },
      { $set: flags, $min: firsts, $max: { status_rank: rank } },
    );
    return found.matchedCount > 0;
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
    status: statusOf(record),
    template_id: record.template_id,
    opened: record.opened,
    delivered: record.delivered,
    resource_type_ref: record.resource_type_ref,
    resource_id_ref: record.resource_id_ref,
  };
}
