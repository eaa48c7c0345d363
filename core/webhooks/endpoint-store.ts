import { randomBytes, randomUUID } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import type { EventType } from './webhook-events.ts';
import type { EndpointView } from './endpoint-schema.ts';
import { cappedCreate } from '../capped-create.ts';
import { createKeyedLock } from '../keyed-lock.ts';

/** How long a rotated-out secret keeps signing beside the new one. */
export const PREVIOUS_SECRET_LIFETIME_MS = 24 * 3600_000;

/** The endpoints one company may register (in each mode, live and test). */
export const MAX_ENDPOINTS_PER_COMPANY = 20;

/**
 * Secrets that sign at once: the current one and those rotated out less than
 * PREVIOUS_SECRET_LIFETIME_MS ago. Every delivery carries one signature per
 * secret, so without a bound 1,500 rotations in a day made a 68 KB
 * `webhook-signature` header (receivers refuse past 16 KB: 431).
 */
export const MAX_SIGNING_SECRETS = 10;

/** Rotations by other processes at once that a rotation outlasts before it answers 409. */
const MAX_ROTATION_TRIES = 20;

/** What a rotation did: a new secret, or not yet (MAX_SIGNING_SECRETS sign until `tooManyUntil`), or another process kept rotating. */
export type Rotation =
  { secret: string; previousExpiresAt: Date } | { tooManyUntil: Date } | { contended: true };

/** One document of `webhook_endpoints`. `_id`: `<company id>/<endpoint id>` (a company's are one `_id` range). */
export interface EndpointDoc {
  _id: string;
  id: string;
  company_id: string;
  /** Registered by a key bound to this organization: only its events. */
  organization_id: string | null;
  test: boolean;
  url: string;
  events: EventType[];
  description: string;
  enabled: boolean;
  disabled_reason: string | null;
  /** Newest first; a rotated-out one carries when it stops signing. */
  secrets: Array<{ secret: string; expires_at: Date | null }>;
  /** Failed attempts since the last 2xx. */
  failed_attempts: number;
  created_at: Date;
  updated_at: Date;
}

export interface EndpointOwner {
  companyId: string;
  organizationId: string | null;
  test: boolean;
}

export interface EndpointStore {
  create(
    owner: EndpointOwner,
    fields: { url: string; events: EventType[]; description?: string },
  ): Promise<{ endpoint: EndpointDoc; secret: string } | 'too-many'>;
  list(owner: EndpointOwner): Promise<EndpointDoc[]>;
  get(owner: EndpointOwner, id: string): Promise<EndpointDoc | null>;
  /** By its `_id` (a delivery names its endpoint so). */
  byKey(key: string): Promise<EndpointDoc | null>;
  update(
    owner: EndpointOwner,
    id: string,
    patch: Partial<Pick<EndpointDoc, 'url' | 'events' | 'description' | 'enabled'>>,
  ): Promise<EndpointDoc | null>;
  remove(owner: EndpointOwner, id: string): Promise<boolean>;
  /** null: no such endpoint of the owner's. */
  rotateSecret(owner: EndpointOwner, id: string): Promise<Rotation | null>;
  /** Every enabled endpoint (the subscription cache; a small collection). */
  enabled(): Promise<EndpointDoc[]>;
  /**
   * After an attempt: a 2xx clears the failure count; the `disableAfter`-th
   * failure in a row disables it. Resolves with the endpoint as written after a
   * failure (null after a 2xx, or when it is gone).
   */
  noteAttempt(key: string, ok: boolean, why: string, disableAfter: number): Promise<EndpointDoc | null>;
}

export const newSecret = (): string => `whsec_${randomBytes(24).toString('base64')}`;

/** The secrets that sign now: the current one and any rotated out less than 24 h ago. */
export const signingSecrets = (endpoint: Pick<EndpointDoc, 'secrets'>, now = new Date()): string[] =>
  endpoint.secrets.filter((s) => s.expires_at === null || s.expires_at > now).map((s) => s.secret);

export function endpointView(doc: EndpointDoc): EndpointView {
  return {
    id: doc.id,
    url: doc.url,
    events: doc.events,
    description: doc.description,
    enabled: doc.enabled,
    disabled_reason: doc.disabled_reason,
    test: doc.test,
    created_at: doc.created_at.toISOString(),
    updated_at: doc.updated_at.toISOString(),
  };
}

/** The range of `_id`s of a company's endpoints: `<company>/` up to `<company>0` ('0' follows '/'). */
const rangeOf = (companyId: string) => ({ $gt: `${companyId}/`, $lt: `${companyId}0` });

export function createEndpointStore(db: Db): EndpointStore {
  /** Creates take turns per company and mode: the cap is exact within a gateway (capped-create.ts). */
  const creates = createKeyedLock();
  /** Rotations of one endpoint take turns within a process; across processes the compare-and-set decides. */
  const rotations = createKeyedLock();
  const endpoints: Collection<EndpointDoc> = db.collection<EndpointDoc>('webhook_endpoints');
  /** The owner's view: its company, its organization when bound to one, its mode. */
  const visible = (owner: EndpointOwner, doc: EndpointDoc | null) =>
    doc !== null &&
    doc.test === owner.test &&
    (owner.organizationId === null || doc.organization_id === owner.organizationId)
      ? doc
      : null;
  const keyOf = (owner: EndpointOwner, id: string) => `${owner.companyId}/${id.toLowerCase()}`;

  const store: EndpointStore = {
    async create(owner, fields) {
      const id = randomUUID();
      const secret = newSecret();
      const now = new Date();
      const endpoint: EndpointDoc = {
        _id: `${owner.companyId}/${id}`,
        id,
        company_id: owner.companyId,
        organization_id: owner.organizationId,
        test: owner.test,
        url: fields.url,
        events: fields.events,
        description: fields.description ?? '',
        enabled: true,
        disabled_reason: null,
        secrets: [{ secret, expires_at: null }],
        failed_attempts: 0,
        created_at: now,
        updated_at: now,
      };
      const created = await cappedCreate({
        lock: creates,
        owner: `${owner.companyId}/${owner.test}`,
        cap: MAX_ENDPOINTS_PER_COMPANY,
        count: async () => (await store.list({ ...owner, organizationId: null })).length,
        insert: () => endpoints.insertOne(endpoint),
        remove: () => endpoints.deleteOne({ _id: endpoint._id }),
      });
      return created === 'too-many' ? created : { endpoint, secret };
    },

    async list(owner) {
      const docs = await endpoints
        .find({ _id: rangeOf(owner.companyId) })
        .limit(1000)
        .toArray();
      return docs
        .filter((doc) => visible(owner, doc))
        .sort((a, b) => b.created_at.getTime() - a.created_at.getTime());
    },

    async get(owner, id) {
      return visible(owner, await endpoints.findOne({ _id: keyOf(owner, id) }));
    },

    byKey: (key) => endpoints.findOne({ _id: key }),

    async update(owner, id, patch) {
      if (!(await store.get(owner, id))) return null;
      const set: Partial<EndpointDoc> = { ...patch, updated_at: new Date() };
      // Re-enabled by its owner: the failures that disabled it are forgiven.
      if (patch.enabled === true) Object.assign(set, { disabled_reason: null, failed_attempts: 0 });
      return endpoints.findOneAndUpdate(
        { _id: keyOf(owner, id) },
        { $set: set },
        { returnDocument: 'after' },
      );
    },

    async remove(owner, id) {
      if (!(await store.get(owner, id))) return false;
      return (await endpoints.deleteOne({ _id: keyOf(owner, id) })).deletedCount === 1;
    },

    rotateSecret(owner, id) {
      return rotations.run(keyOf(owner, id), async () => {
        // Compare-and-set on the current secret, read again when another
        // process's rotation came first: rotations at once all land, and each
        // secret they answered with signs (the latest current, the others beside it).
        for (let tries = 0; tries < MAX_ROTATION_TRIES; tries++) {
          const doc = await store.get(owner, id);
          if (!doc) return null;
          const now = new Date();
          const previousExpiresAt = new Date(now.getTime() + PREVIOUS_SECRET_LIFETIME_MS);
          // The old current secret signs 24 h more; older rotated-out ones keep their own expiry.
          const kept = doc.secrets
            .map((s) => (s.expires_at === null ? { ...s, expires_at: previousExpiresAt } : s))
            .filter((s) => s.expires_at !== null && s.expires_at > now);
          if (kept.length >= MAX_SIGNING_SECRETS) {
            // Newest first: the last one kept is the first to stop signing.
            return { tooManyUntil: kept[kept.length - 1]!.expires_at! };
          }
          const secret = newSecret();
          const rotated = await endpoints.updateOne(
            { _id: doc._id, 'secrets.0.secret': doc.secrets[0]?.secret },
            { $set: { secrets: [{ secret, expires_at: null }, ...kept], updated_at: now } },
          );
          if (rotated.matchedCount === 1) return { secret, previousExpiresAt };
        }
        return { contended: true };
      });
    },

    enabled: () => endpoints.find({ enabled: true }).limit(10_000).toArray(),

    async noteAttempt(key, ok, why, disableAfter) {
      if (ok) {
        await endpoints.updateOne(
          { _id: key, failed_attempts: { $gt: 0 } },
          { $set: { failed_attempts: 0 } },
        );
        return null;
      }
      const after = await endpoints.findOneAndUpdate(
        { _id: key },
        { $inc: { failed_attempts: 1 } },
        { returnDocument: 'after' },
      );
      if (!after || !after.enabled || after.failed_attempts < disableAfter) return after;
      const disabled = {
        enabled: false,
        disabled_reason: `disabled after ${after.failed_attempts} failed attempts in a row (last: ${why})`,
        updated_at: new Date(),
      };
      await endpoints.updateOne({ _id: key }, { $set: disabled });
      return { ...after, ...disabled };
    },
  };
  return store;
}
