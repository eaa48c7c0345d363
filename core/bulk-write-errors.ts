/**
 * The per-document errors of an unordered bulk write (`insertMany`,
 * `bulkWrite` with `ordered: false`): the driver's `MongoBulkWriteError`
 * lists them in `writeErrors`, one object or an array, each with the index
 * of its document in the write. The other documents were written.
 */
import { DUPLICATE_KEY } from './errors.ts';
import type { ItemErrors } from './group-commit.ts';

export interface ItemWriteError {
  index: number;
  code?: number;
  errmsg?: string;
}

/** The per-document errors of `err`; undefined when it is not such an error (the write failed as a whole). */
export function writeErrorsOf(err: unknown): ItemWriteError[] | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const errors = (err as { writeErrors?: unknown }).writeErrors;
  const list = (Array.isArray(errors) ? errors : errors === undefined ? [] : [errors]) as ItemWriteError[];
  // Empty for a write-concern failure: not one document's, the write as a whole is in doubt.
  return list.length === 0 ? undefined : list;
}

/** A bulk write's error (or a single write's) whose every failed document is a duplicate `_id`. */
export function onlyDuplicates(err: unknown): boolean {
  const list = writeErrorsOf(err);
  if (list === undefined) return (err as { code?: unknown } | null)?.code === DUPLICATE_KEY;
  return list.every((e) => e.code === DUPLICATE_KEY);
}

/**
 * Runs an unordered bulk write for the group commit (core/group-commit.ts):
 * resolves with the errors of the documents that failed alone, by index,
 * each an Error with the document's `code` (so `isDuplicateKeyError` knows a
 * duplicate `_id`); throws what the write threw when it failed as a whole.
 */
export async function unorderedWrite(write: () => Promise<unknown>): Promise<ItemErrors | undefined> {
  try {
    await write();
    return undefined;
  } catch (err) {
    const list = writeErrorsOf(err);
    if (list === undefined) throw err;
    return new Map(
      list.map((e) => [e.index, Object.assign(new Error(e.errmsg ?? 'write failed'), { code: e.code })]),
    );
  }
}
