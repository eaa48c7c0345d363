import type { Collection, Db, Filter } from 'mongodb';
import type { HeldRequest, ScheduledOwner } from './scheduled-pending.ts';

/**
 * The `scheduled_emails` collection: one document per scheduled email that
 * has not met its fate yet (`_id` = email id), holding what the send needs
 * when its time comes: the request as received (less `send_at`) and who made
 * it. Removed once the email was sent, failed or was cancelled, so the
 * collection holds only what is outstanding (its scans stay small on
 * FerretDB, which indexes nothing but `_id`).
 *
 * The request is stored as JSON text, not as a document: its field names
 * are the caller's (template variables…), and a stored field name must not
 * hold `.` or `$`.
 *
 * `run_started_at` is the outbox mark: null until the gateway (or the
 * outbox after it) started the email's workflow run.
 */
export interface ScheduledDoc {
  _id: string;
  company_id: string;
  organization_id: string | null;
  user_id: string | null;
  test: boolean;
  send_at: Date;
  created_at: Date;
  body: string;
  /** `body.length`, for the company's bound on stored request (scheduled-pending.ts); absent on requests stored before it. */
  body_chars?: number;
  run_started_at: Date | null;
}

/** Where a page of the listing continues: after this (send_at, email id). */
export interface ScheduledPosition {
  sendAt: Date;
  emailId: string;
}

export interface ScheduledStore {
  insert(doc: ScheduledDoc): Promise<void>;
  find(emailId: string): Promise<ScheduledDoc | null>;
  /** Removes the stored request; resolves with whose it was, once: to the removal that took it (else null). */
  remove(emailId: string): Promise<{ owner: ScheduledOwner; chars: number } | null>;
  /** The requests `owner` has stored, with their characters: a scan (scheduled-pending.ts recounts with it). */
  held(owner: ScheduledOwner): Promise<HeldRequest[]>;
  markStarted(emailId: string): Promise<void>;
  /** Documents whose run was not started, created before `before` (the outbox's work). */
  unstarted(before: Date, limit: number): Promise<Array<Omit<ScheduledDoc, 'body'>>>;
  /** A company's (organization's, when given) documents by (send_at, _id), after `after`. */
  page(
    owner: { companyId: string; organizationId: string | undefined; test: boolean },
    after: ScheduledPosition | undefined,
    limit: number,
  ): Promise<Array<Omit<ScheduledDoc, 'body'>>>;
}

export function scheduledStore(db: Db): ScheduledStore {
  const docs: Collection<ScheduledDoc> = db.collection<ScheduledDoc>('scheduled_emails');
  // The body is never needed to list or start runs.
  const withoutBody = { projection: { body: 0 } } as const;
  return {
    async insert(doc) {
      await docs.insertOne(doc);
    },
    find: (emailId) => docs.findOne({ _id: emailId }),
    async remove(emailId) {
      // Read, then removed: only the removal that took it reports it (FerretDB's findAndModify takes no projection).
      const doc = await docs.findOne(
        { _id: emailId },
        { projection: { company_id: 1, test: 1, body_chars: 1 } },
      );
      if (!doc || (await docs.deleteOne({ _id: emailId })).deletedCount !== 1) return null;
      return { owner: { companyId: doc.company_id, test: doc.test }, chars: doc.body_chars ?? 0 };
    },
    async held(owner) {
      const found = await docs
        .find({ company_id: owner.companyId, test: owner.test }, { projection: { body_chars: 1 } })
        .toArray();
      return found.map((d) => ({ emailId: d._id, chars: d.body_chars ?? 0 }));
    },
    async markStarted(emailId) {
      await docs.updateOne({ _id: emailId }, { $set: { run_started_at: new Date() } });
    },
    unstarted: (before, limit) =>
      docs
        .find({ run_started_at: null, created_at: { $lt: before } }, withoutBody)
        .limit(limit)
        .toArray(),
    page(owner, after, limit) {
      const filter: Filter<ScheduledDoc> = { company_id: owner.companyId, test: owner.test };
      if (owner.organizationId !== undefined) filter.organization_id = owner.organizationId;
      if (after)
        filter.$or = [
          { send_at: { $gt: after.sendAt } },
          { send_at: after.sendAt, _id: { $gt: after.emailId } },
        ];
      return docs.find(filter, withoutBody).sort({ send_at: 1, _id: 1 }).limit(limit).toArray();
    },
  };
}
