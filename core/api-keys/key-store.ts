import type { Collection, Db } from 'mongodb';
import { LRUCache } from 'lru-cache';
import { MailroomError } from '../errors.ts';
import type { Scope } from '../identity.ts';
import type { Logger } from '../logger.ts';
import { generateKey, parseKey, secretMatches } from './key-format.ts';
import { createKeyUses } from './key-uses.ts';
import { cappedCreate } from '../capped-create.ts';
import { createKeyedLock } from '../keyed-lock.ts';

/**
 * The `api_keys` collection: one document per key, `_id` = the key's id (so
 * every lookup is a primary-key read, which FerretDB serves from its index).
 * Only a hash of the secret is stored. After its insert, the only write to a
 * key's document is its revocation: FerretDB applies an update as a
 * read-modify-write of the whole document, so a last-use write racing a
 * revocation on another gateway could write the key back live. The last use
 * is therefore kept apart, in `api_key_uses` (key-uses.ts).
 */
export interface ApiKeyDocument {
  _id: string;
  company_id: string;
  organization_id: string | null;
  name: string;
  scopes: Scope[];
  secret_hash: string;
  /** A test-mode key (`mr_test_…`): its sends never reach a provider. Absent on keys made before. */
  test?: boolean;
  created_at: Date;
  /** Written by earlier versions only; the last use now lives in `api_key_uses`. */
  last_used_at: Date | null;
  revoked_at: Date | null;
}

/** A key as operators and the API see it: everything but the hash. */
export interface ApiKey {
  id: string;
  companyId: string;
  organizationId: string | null;
  name: string;
  scopes: Scope[];
  test: boolean;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

export interface NewApiKey {
  companyId: string;
  organizationId?: string | null | undefined;
  name: string;
  scopes: readonly Scope[];
  test?: boolean | undefined;
}

export interface KeyStore {
  /** Stores a new key; the plaintext is returned once and never again. */
  create(input: NewApiKey): Promise<{ key: ApiKey; plaintext: string }>;
  /** Keys, newest first; of one company when given, and of one of its organizations when given too. */
  list(companyId?: string, organizationId?: string): Promise<ApiKey[]>;
  /**
   * `create`, unless the company holds `cap` keys not revoked of the new
   * key's mode already (test keys have their own cap): 'too-many' then, also
   * when creates race (capped-create.ts).
   */
  createCapped(input: NewApiKey, cap: number): Promise<{ key: ApiKey; plaintext: string } | 'too-many'>;
  /**
   * Revokes a key (of `companyId` when given, of its organization
   * `organizationId` when given too, and a test key only when `testOnly`);
   * false when there is no such live key. With `grantable` (the revoking
   * key's scopes), a key holding a scope beyond them is refused (403): a
   * leaked `keys:manage` key cannot revoke the company's stronger keys.
   */
  revoke(
    id: string,
    companyId?: string,
    organizationId?: string,
    testOnly?: boolean,
    grantable?: readonly Scope[],
  ): Promise<boolean>;
  /** The live key a presented plaintext proves, or undefined (unknown, revoked, wrong secret, malformed). */
  verify(plaintext: string): Promise<ApiKey | undefined>;
}

/**
 * How long a verified key's document may be served from memory. Bounds how
 * long a revocation takes to reach this process; saves one database read per
 * request on busy keys.
 */
export const KEY_CACHE_TTL_MS = 2_000;
const toApiKey = (doc: ApiKeyDocument, lastUsedAt: Date | null = doc.last_used_at): ApiKey => ({
  id: doc._id,
  companyId: doc.company_id,
  organizationId: doc.organization_id,
  name: doc.name,
  scopes: doc.scopes,
  test: doc.test === true,
  createdAt: doc.created_at,
  lastUsedAt,
  revokedAt: doc.revoked_at,
});

/** The later of two last-use times (a key used before and after the move to `api_key_uses` has both). */
const latest = (a: Date | null, b: Date | undefined): Date | null =>
  b !== undefined && (a === null || b > a) ? b : a;

export function createKeyStore(db: Db, logger: Logger): KeyStore {
  const keys: Collection<ApiKeyDocument> = db.collection('api_keys');
  const cache = new LRUCache<string, ApiKeyDocument>({ max: 10_000, ttl: KEY_CACHE_TTL_MS });
  const uses = createKeyUses(db, logger);

  async function load(id: string): Promise<ApiKeyDocument | null> {
    const cached = cache.get(id);
    if (cached) return cached;
    const doc = await keys.findOne({ _id: id });
    if (doc) cache.set(id, doc);
    return doc;
  }

  /** Capped creates take turns per company and mode (capped-create.ts). */
  const creates = createKeyedLock();

  const store: KeyStore = {
    async create(input) {
      const { id, plaintext, secretHash } = generateKey(input.test === true);
      const doc: ApiKeyDocument = {
        _id: id,
        // Every UUID Mailroom stores is lower-case, whoever spelled it.
        company_id: input.companyId.toLowerCase(),
        organization_id: input.organizationId?.toLowerCase() ?? null,
        name: input.name,
        scopes: [...new Set(input.scopes)],
        secret_hash: secretHash,
        ...(input.test ? { test: true } : {}),
        created_at: new Date(),
        last_used_at: null,
        revoked_at: null,
      };
      await keys.insertOne(doc);
      return { key: toApiKey(doc), plaintext };
    },

    async list(companyId, organizationId) {
      const filter: Partial<ApiKeyDocument> = {};
      if (companyId) filter.company_id = companyId.toLowerCase();
      if (organizationId) filter.organization_id = organizationId.toLowerCase();
      const docs = await keys.find(filter).toArray();
      const lastUsed = await uses.lastUsed(docs.map((d) => d._id));
      return docs
        .map((doc) => toApiKey(doc, latest(doc.last_used_at, lastUsed.get(doc._id))))
        .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
    },

    createCapped(input, cap) {
      const companyId = input.companyId.toLowerCase();
      const test = input.test === true;
      return cappedCreate({
        lock: creates,
        owner: `${companyId}/${test}`,
        cap,
        count: () =>
          keys.countDocuments({ company_id: companyId, revoked_at: null, test: test ? true : { $ne: true } }),
        insert: () => store.create(input),
        remove: (created) => keys.deleteOne({ _id: created.key.id }),
      });
    },

    async revoke(id, companyId, organizationId, testOnly = false, grantable) {
      const doc = await keys.findOne({ _id: id });
      if (!doc || doc.revoked_at) return false;
      if (testOnly && doc.test !== true) return false;
      if (companyId !== undefined && doc.company_id !== companyId.toLowerCase()) return false;
      if (organizationId !== undefined && doc.organization_id !== organizationId.toLowerCase()) return false;
      const beyond = grantable && doc.scopes.filter((scope) => !grantable.includes(scope));
      if (beyond?.length)
        throw new MailroomError(
          'forbidden',
          `this API key cannot revoke a key with the ${beyond.join(', ')} scope`,
        );
      await keys.updateOne({ _id: id }, { $set: { revoked_at: new Date() } });
      cache.delete(id);
      return true;
    },

    async verify(plaintext) {
      const parsed = parseKey(plaintext);
      if (!parsed) return undefined;
      const doc = await load(parsed.id);
      if (!doc || doc.revoked_at || !secretMatches(parsed.secret, doc.secret_hash)) return undefined;
      // A live key's secret with the test prefix, or the reverse, proves nothing.
      if (parsed.test !== (doc.test === true)) return undefined;
      uses.note(doc._id);
      return toApiKey(doc);
    },
  };
  return store;
}
