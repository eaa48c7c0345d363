import type { Collection, UpdateFilter } from 'mongodb';
import { unorderedWrite } from '../../bulk-write-errors.ts';
import { createGroupCommit } from '../../group-commit.ts';
import type { EmailRecord } from './record.ts';

/**
 * The send path's two writes to `emails`, group-committed (core/group-commit.ts):
 * the new records of concurrent sends go out in one unordered `insertMany`,
 * their "sent" updates in one unordered bulk of `updateOne`s by `_id`. Every
 * database command costs the gateway a socket write and the wake-up of the
 * database (about a tenth of a send's CPU each, docs/benchmarks.md), so
 * under load a send pays a share of a round trip rather than one of its own,
 * and a lone send waits for nothing more than its own write.
 *
 * Each caller learns its own document's fate: a duplicate `_id` (a retried
 * keyed send) fails only that caller, with a duplicate-key error as
 * `insertOne` would have thrown; the others in the write succeed.
 */
export interface RecordBatches {
  insert(record: EmailRecord): Promise<void>;
  /** One `updateOne({ _id }, update)`; resolves once written (matched or not). */
  updateById(emailId: string, update: UpdateFilter<EmailRecord>): Promise<void>;
}

/**
 * Documents per write at most. FerretDB 1.24 slows down with large commands
 * (OPEN_WRITE_CHUNK in record-store.ts); at the send bench's 10 connections a
 * write carries 2–5.
 */
const GROUP_MAX = 25;

export function createRecordBatches(emails: Collection<EmailRecord>): RecordBatches {
  const inserts = createGroupCommit<EmailRecord>(
    (records) => unorderedWrite(() => emails.insertMany(records, { ordered: false })),
    GROUP_MAX,
  );
  const updates = createGroupCommit<{ emailId: string; update: UpdateFilter<EmailRecord> }>(
    (batch) =>
      unorderedWrite(() =>
        emails.bulkWrite(
          batch.map(({ emailId, update }) => ({ updateOne: { filter: { _id: emailId }, update } })),
          { ordered: false },
        ),
      ),
    GROUP_MAX,
  );
  return {
    // A copy: the driver may add fields to what it inserts.
    insert: (record) => inserts.submit([{ ...record }]),
    updateById: (emailId, update) => updates.submit([{ emailId, update }]),
  };
}
