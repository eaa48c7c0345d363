import type { Collection, Db } from 'mongodb';
import type { Address } from '../addresses.ts';
import type { SkippedRecipient, SuppressionReason } from '../email-schema.ts';
import { createCheckCache, SUPPRESSION_CHECK_CACHE_MS } from './check-cache.ts';

/**
 * The `suppressions` collection: per company, the addresses Mailroom will not
 * send to (a hard bounce, a spam report, an unsubscribe, or added by hand).
 *
 * `_id` = `<company id>/<normalized address>`: FerretDB answers only `_id`
 * equality without a scan, so a send checks each recipient with one `{ _id }`
 * read. A company's list is the `_id` range of its prefix (a scan on FerretDB,
 * an index range on MongoDB: an operator's listing, never on the send path).
 * One company's entries can never match another's: the company is part of the key.
 *
 * A send's check is answered from what this process read within
 * SUPPRESSION_CHECK_CACHE_MS (check-cache.ts); this store's own adds and
 * removes apply to the next check at once.
 */

export interface SuppressionDoc {
  _id: string;
  company_id: string;
  email: string;
  reason: SuppressionReason;
  /** Where it came from: the provider's event webhook or the API. */
  source: 'webhook' | 'api';
  /** The provider's words (a bounce's SMTP reason), or the API caller's note. */
  detail: string | null;
  /** The email whose event suppressed the address (webhook entries). */
  email_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export type Suppression = Omit<SuppressionDoc, '_id'>;

/**
 * Whose list a send reads and a suppression goes to: the company's, or for
 * test-mode keys and their sends the company's test list (`test:<company
 * id>`), so test data never suppresses a live address, nor the reverse.
 */
export const listOwner = (companyId: string, test: boolean | undefined): string =>
  test ? `test:${companyId}` : companyId;

export interface ListQuery {
  reason?: SuppressionReason | undefined;
  /** Exclusive: the last address of the previous page. */
  after?: string | undefined;
  limit: number;
}

export interface SuppressionStore {
  /** The suppressed ones among `addresses` (normalized address → reason). */
  check(companyId: string, addresses: readonly string[]): Promise<Map<string, SuppressionReason>>;
  get(companyId: string, address: string): Promise<Suppression | undefined>;
  /**
   * Adds or refreshes an entry (its reason and source; a detail or email id
   * given replaces the old one, none keeps it). Nothing but another
   * `spam_report` or `unsubscribe` replaces one of those: the recipient's
   * own choice is the stronger reason to keep.
   */
  add(
    entry: Omit<Suppression, 'created_at' | 'updated_at'>,
  ): Promise<{ suppression: Suppression; created: boolean }>;
  /** True when there was an entry to remove. */
  remove(companyId: string, address: string): Promise<boolean>;
  /** One page in address order, and the cursor of the next page (undefined on the last). */
  list(companyId: string, query: ListQuery): Promise<{ data: Suppression[]; next: string | undefined }>;
}

/**
 * Address comparison: trimmed and lower-cased as a whole. The local part is
 * case-sensitive in theory, never in practice, and SendGrid and Postmark
 * suppress case-insensitively too.
 */
export const normalizeAddress = (address: string): string => address.trim().toLowerCase();

const idOf = (companyId: string, address: string) => `${companyId}/${normalizeAddress(address)}`;

/** Reasons the recipient chose; a later bounce of the same address does not overwrite them. */
const RECIPIENT_CHOICES: readonly SuppressionReason[] = ['spam_report', 'unsubscribe'];

const view = ({ _id, ...rest }: SuppressionDoc): Suppression => rest;

export function createSuppressionStore(
  db: Db,
  /** How long a check's answer is reused (0: read every time). */
  { checkCacheMs = SUPPRESSION_CHECK_CACHE_MS }: { checkCacheMs?: number } = {},
): SuppressionStore {
  const entries: Collection<SuppressionDoc> = db.collection('suppressions');
  const checked = createCheckCache(checkCacheMs);

  /** Runs a write of entry `_id`; whatever its outcome, cached checks of it are forgotten. */
  async function changing<T>(_id: string, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } finally {
      checked.changed(_id);
    }
  }

  /** One `{ _id }` read: FerretDB answers `_id` equality from its primary key but scans for `_id: { $in }`. */
  async function read(_id: string): Promise<SuppressionReason | null> {
    const reading = checked.begin();
    const doc = await entries.findOne({ _id }, { projection: { reason: 1 } });
    const reason = doc?.reason ?? null;
    checked.fill(reading, _id, reason);
    return reason;
  }

  return {
    async check(companyId, addresses) {
      // Each distinct address once, the uncached ones read in parallel.
      const emails = [...new Set(addresses.map(normalizeAddress))];
      const reasons = await Promise.all(
        emails.map((email) => {
          const _id = idOf(companyId, email);
          const cached = checked.get(_id);
          return cached === undefined ? read(_id) : cached;
        }),
      );
      const found = new Map<string, SuppressionReason>();
      emails.forEach((email, i) => {
        const reason = reasons[i];
        if (reason) found.set(email, reason);
      });
      return found;
    },

    async get(companyId, address) {
      const doc = await entries.findOne({ _id: idOf(companyId, address) });
      return doc ? view(doc) : undefined;
    },

    async add(entry) {
      const _id = idOf(entry.company_id, entry.email);
      const now = new Date();
      const existing = await entries.findOne({ _id });
      if (existing) {
        // The recipient's own choice stands against anything but another such choice.
        const keep = RECIPIENT_CHOICES.includes(existing.reason) && !RECIPIENT_CHOICES.includes(entry.reason);
        if (keep) return { suppression: view(existing), created: false };
        const updated: SuppressionDoc = {
          ...existing,
          reason: entry.reason,
          source: entry.source,
          // What the new addition does not say (no note, no email) is not erased.
          detail: entry.detail ?? existing.detail,
          email_id: entry.email_id ?? existing.email_id,
          updated_at: now,
        };
        await changing(_id, () => entries.replaceOne({ _id }, updated));
        return { suppression: view(updated), created: false };
      }
      const doc: SuppressionDoc = {
        ...entry,
        _id,
        email: normalizeAddress(entry.email),
        created_at: now,
        updated_at: now,
      };
      try {
        await changing(_id, () => entries.insertOne(doc));
        return { suppression: view(doc), created: true };
      } catch (err) {
        // Added concurrently (two webhook events for one address): the first one stands.
        const winner = await entries.findOne({ _id });
        if (!winner) throw err;
        return { suppression: view(winner), created: false };
      }
    },

    async remove(companyId, address) {
      const _id = idOf(companyId, address);
      const { deletedCount } = await changing(_id, () => entries.deleteOne({ _id }));
      return deletedCount > 0;
    },

    async list(companyId, { reason, after, limit }) {
      const prefix = `${companyId}/`;
      // The company's `_id` range: every id starts with the prefix; '0' sorts right after '/'.
      const range = { $gt: after === undefined ? prefix : idOf(companyId, after), $lt: `${companyId}0` };
      const docs = await entries
        .find({ _id: range, ...(reason ? { reason } : {}) })
        .sort({ _id: 1 })
        .limit(limit + 1)
        .toArray();
      const page = docs.slice(0, limit).map(view);
      return { data: page, next: docs.length > limit ? page.at(-1)?.email : undefined };
    },
  };
}

/** The recipients a send keeps, and those it leaves out because they are suppressed. */
export function withoutSuppressed<T extends { to: Address[]; cc: Address[]; bcc: Address[] }>(
  recipients: T,
  suppressed: ReadonlyMap<string, SuppressionReason>,
): { kept: T; skipped: SkippedRecipient[] } {
  const skipped: SkippedRecipient[] = [];
  const keep = (list: Address[]) =>
    list.filter((address) => {
      const reason = suppressed.get(normalizeAddress(address.email));
      if (reason) skipped.push({ email: address.email, reason });
      return !reason;
    });
  const kept = { ...recipients, to: keep(recipients.to), cc: keep(recipients.cc), bcc: keep(recipients.bcc) };
  return { kept, skipped };
}
