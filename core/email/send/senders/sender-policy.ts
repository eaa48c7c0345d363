import type { Collection, Db } from 'mongodb';
import { LRUCache } from 'lru-cache';
import { MailroomError } from '../../../errors.ts';
import { fromNotAllowed } from '../../email-messages.ts';
import { normalizeSenderEntry as normalizeEntry } from '../../../validation.ts';

/**
 * Which `from` addresses a company may send as. A key proves a company, not
 * a domain: without this, any key holder could send as any other company's
 * (or anybody's) address through the deployment's provider account, whose
 * verified senders they all share. Like a hosted service's verified domains:
 *
 * - the deployment's default sender (EMAIL_FROM) is always allowed;
 * - ALLOWED_SENDERS (domains or addresses) is allowed for every company:
 *   a single-company deployment lists its own domains there;
 * - each company may be given its own list by the operator
 *   (`npm run keys -- senders`, stored in `company_senders`).
 *
 * An entry with `@` allows that address; one without, every address of that
 * domain (exactly, not its subdomains). Case never matters. Behind a trusted
 * proxy (AUTH_MODE=trusted-headers) with neither ALLOWED_SENDERS nor the
 * company's list set, any `from` goes: the proxy answers for its callers,
 * and `npm run dev` keeps the interface's plain `from`. With API keys,
 * what no list allows is refused with 403 before anything is recorded.
 */
export interface SenderPolicy {
  /** Throws 403 when `companyId` may not send as `from` (an address, already validated). */
  check(companyId: string | undefined, from: string): Promise<void>;
  /** The company's own list, or null for none. */
  listOf(companyId: string): Promise<string[] | null>;
  /** Sets (a non-empty list) or removes (null) the company's own list. */
  setList(companyId: string, entries: string[] | null): Promise<void>;
}

export interface SenderPolicyOptions {
  /** EMAIL_FROM's address. */
  defaultFrom: string;
  /** ALLOWED_SENDERS, normalized (config.ts). */
  allowed: readonly string[];
  /** With nothing listed anywhere, any `from` goes (trusted-headers mode). */
  openWhenUnlisted: boolean;
}

interface SendersDoc {
  _id: string;
  entries: string[];
  updated_at: Date;
}

/** How long a replica goes on using a company's list it read (a change applies within this). */
export const SENDERS_CACHE_MS = 5_000;
const NONE: readonly string[] = [];

export function createSenderPolicy(db: Db, options: SenderPolicyOptions): SenderPolicy {
  const collection: Collection<SendersDoc> = db.collection('company_senders');
  const cache = new LRUCache<string, readonly string[]>({ max: 10_000, ttl: SENDERS_CACHE_MS });
  const deployment = options.allowed;
  const defaultFrom = options.defaultFrom.toLowerCase();

  async function entriesOf(companyId: string): Promise<readonly string[]> {
    const cached = cache.get(companyId);
    if (cached) return cached;
    const doc = await collection.findOne({ _id: companyId });
    const entries = doc?.entries ?? NONE;
    cache.set(companyId, entries);
    return entries;
  }

  return {
    async check(companyId, from) {
      const address = from.toLowerCase();
      if (address === defaultFrom || allows(deployment, address)) return;
      const own = companyId === undefined ? NONE : await entriesOf(companyId);
      if (allows(own, address)) return;
      if (options.openWhenUnlisted && deployment.length === 0 && own.length === 0) return;
      throw new MailroomError('forbidden', fromNotAllowed(from));
    },
    async listOf(companyId) {
      const doc = await collection.findOne({ _id: companyId });
      return doc?.entries ?? null;
    },
    async setList(companyId, entries) {
      cache.delete(companyId);
      if (entries === null) await collection.deleteOne({ _id: companyId });
      else
        await collection.updateOne(
          { _id: companyId },
          { $set: { entries: entries.map(normalizeEntry), updated_at: new Date() } },
          { upsert: true },
        );
    },
  };
}

function allows(entries: readonly string[], address: string): boolean {
  const domain = address.slice(address.lastIndexOf('@') + 1);
  return entries.some((entry) => (entry.includes('@') ? entry === address : entry === domain));
}
