import { createHash } from 'node:crypto';
import type { Collection, Db, UpdateFilter } from 'mongodb';
import stringify from 'safe-stable-stringify';
import { MailroomError, isDuplicateKeyError, isMailroomError, type ErrorKind } from '../../errors.ts';
import type { Logger } from '../../logger.ts';
import { IDEMPOTENCY_KEY_INVALID, isValidIdempotencyKey } from '../../validation.ts';
import { createKeyedLock } from '../../keyed-lock.ts';
import type { EmailRecord } from '../records/record.ts';
import type { RecordStore } from '../records/record-store.ts';
import {
  IDEMPOTENCY_KEY_BODY_MISMATCH,
  IDEMPOTENCY_KEY_IN_PROGRESS,
  IDEMPOTENCY_KEY_NEEDS_AUTHENTICATION,
  IDEMPOTENCY_KEY_UNFINISHED,
} from '../email-messages.ts';

/** The first request's failure, answered again to a later request with its key (a replay, like a success's). */
export class ReplayedFailure extends MailroomError {
  readonly replayed = true;
}

/**
 * `Idempotency-Key` on POST /api/email/send and /api/email/bulk: the same key
 * from the same company with the same body answers the first response again
 * and calls the provider once; with another body → 409. A key bound to an
 * organization has keys of its own (its organization's), apart from the
 * company-wide ones and other organizations'.
 *
 * The `email_requests` collection holds one document per (company, key),
 * `_id` = `<company>/<key>` (`<company>:<organization>/<key>` for an
 * organization-bound caller; a UUID holds no `:` or `/`, so the two never
 * collide), so the first request wins by inserting it (a
 * unique `_id` is atomic on MongoDB and FerretDB alike). It holds a hash of
 * the body, the state (`running` under a lease the request keeps renewing,
 * then `done` with the answer), the email ids the request created and how
 * many requests carried the key.
 *
 * What is stored: a completed answer (a send's result, a bulk's results,
 * including failed items) and the failures that may not be repeated (the
 * provider rejected the message, or its outcome is unknown). Failures that
 * sent nothing (invalid input, missing identity, suppressed recipients, the
 * provider unreachable before taking the message) are not stored: the key is
 * free again, so the caller can fix the request and retry with the same key.
 *
 * A second request while the first runs waits for its answer (up to
 * WAIT_MS, then 409 "still in progress"), a failure that frees the key
 * included: the first marks the key `released` with its failure, which the
 * requests that waited for it answer (never calling the provider
 * themselves: twenty waiters on a provider's 503 made twenty calls), while
 * a request that comes after it, its caller's retry, takes the key anew
 * and runs. A request whose process died
 * while running leaves its lease to expire: retries get 409 "stopped before
 * it answered" and never a second send, because the provider may already have it.
 */

/** How long a key is remembered. */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000;
/** A running request renews its lease every LEASE_MS / 3; a lease older than LEASE_MS means its process died. */
const LEASE_MS = 30_000;
/** How long a second request with the same key waits for the first one's answer. */
const WAIT_MS = 30_000;
const POLL_MS = 50;
/** Failures answered again to every later request with the key: the provider may have the message, or refused it. */
const FINAL_FAILURES: readonly ErrorKind[] = ['provider_rejected', 'outcome_unknown'];

export type RequestKind = 'send' | 'bulk';

interface StoredAnswer {
  result?: unknown;
  error?: { kind: ErrorKind; message: string };
}

interface RequestDoc {
  _id: string;
  company_id: string;
  /** The organization of an organization-bound caller; absent for company-wide ones. */
  organization_id?: string;
  key: string;
  kind: RequestKind;
  body_hash: string;
  /** `released`: the first request failed without sending; its waiters answer that, later requests run anew. */
  state: 'running' | 'done' | 'released';
  lease_until: Date;
  answer: StoredAnswer | null;
  email_ids: string[];
  /** Requests that carried the key: 1 for the first, +1 per replay. */
  seen: number;
  created_at: Date;
  expires_at: Date;
}

export interface IdempotentRequest<T> {
  companyId: string | undefined;
  /** The organization an organization-bound caller is limited to (its own keys); undefined: company-wide. */
  organizationId?: string | undefined;
  /** A test-mode caller's keys are apart from the live ones of the same company. */
  test?: boolean | undefined;
  key: string;
  kind: RequestKind;
  body: unknown;
  run: () => Promise<T>;
  /** The email records the answer created (they get the key and its count). */
  emailIdsOf: (result: T) => string[];
}

export interface RequestIdempotency {
  /** Runs `request.run` once per (company, key); later requests get its answer (`replayed`). */
  once<T>(request: IdempotentRequest<T>): Promise<{ result: T; replayed: boolean }>;
  /** Stops the hourly purge of expired keys (shutdown). */
  stop(): void;
}

const PURGE_INTERVAL_MS = 60 * 60 * 1000;

/** 400 unless `key` is 1–255 characters without control characters (the same rule as workflow triggers). */
function checkIdempotencyKey(key: string): string {
  if (!isValidIdempotencyKey(key)) throw new MailroomError('validation', IDEMPOTENCY_KEY_INVALID);
  return key;
}

/** Characters of a body hashed between two yields to the event loop (a few milliseconds). */
const HASH_SLICE = 1 << 20;

/**
 * The SHA-256 of the body's canonical JSON, hashed a slice at a time with
 * the event loop free in between: 40 MB of attachments held it 0.1–0.25 s in
 * one go. (The gateway bounds the body's nesting, so the serialisation never
 * recurses deeply.)
 */
async function hashOf(kind: RequestKind, body: unknown): Promise<string> {
  const canonical = stringify({ kind, body }) ?? '';
  const hash = createHash('sha256');
  for (let at = 0; at < canonical.length;) {
    if (at > 0) await new Promise((resolve) => setImmediate(resolve));
    let end = Math.min(at + HASH_SLICE, canonical.length);
    // Never between the two halves of a surrogate pair: each slice is encoded to UTF-8 on its own.
    if (end < canonical.length && isHighSurrogate(canonical.charCodeAt(end - 1))) end++;
    hash.update(canonical.slice(at, end));
    at = end;
  }
  return hash.digest('hex');
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function createRequestIdempotency(db: Db, records: RecordStore, logger: Logger): RequestIdempotency {
  const requests: Collection<RequestDoc> = db.collection('email_requests');
  /**
   * Serialises the `seen` counts of one key (FerretDB's updates are
   * read-modify-write). Only the count: which request runs is decided by the
   * insert of the key's `_id`, atomic across replicas on both databases.
   */
  const lock = createKeyedLock();

  /** The same update on each record (by `_id` alone: FerretDB scans for `_id: { $in }`). */
  const noteOnRecords = (emailIds: readonly string[], update: UpdateFilter<EmailRecord>) =>
    records.updateEach(emailIds.map((emailId) => ({ emailId, update })));

  /**
   * Renews the lease of a running request every LEASE_MS / 3 until stopped.
   * The renewal and the request's own end (its answer stored, or the key
   * freed) are the only writes to the document while it runs, both from this
   * process: stop() waits for a renewal in flight, so the end is never
   * overwritten. On FerretDB an update is a read-modify-write of the whole
   * document, and a renewal landing after the answer would put back
   * `state: running` without it: later requests would wait, then hear "did
   * not finish".
   */
  function keepLease(id: string): { stop(): Promise<void> } {
    let inFlight: Promise<unknown> = Promise.resolve();
    const renew = setInterval(() => {
      inFlight = requests
        .updateOne({ _id: id, state: 'running' }, { $set: { lease_until: new Date(Date.now() + LEASE_MS) } })
        .catch((err: unknown) => logger.warn({ err }, 'idempotency lease not renewed'));
    }, LEASE_MS / 3);
    renew.unref();
    return {
      async stop() {
        clearInterval(renew);
        await inFlight;
      },
    };
  }

  /** Runs the first request of a key, renewing its lease, and stores what may be answered again. */
  async function runFirst<T>(id: string, request: IdempotentRequest<T>): Promise<T> {
    const lease = keepLease(id);
    let result: T;
    try {
      result = await request.run();
    } catch (err) {
      await lease.stop();
      if (isMailroomError(err) && FINAL_FAILURES.includes(err.kind))
        await finish(id, { error: { kind: err.kind, message: err.message } }, []);
      // Nothing was sent (or nothing that cannot be retried): the key is free
      // again, its failure left for the requests waiting on it. By `_id`
      // alone: while it runs, nobody else removes or replaces it.
      else if (isMailroomError(err))
        await requests
          .updateOne(
            { _id: id },
            { $set: { state: 'released', answer: { error: { kind: err.kind, message: err.message } } } },
          )
          .catch(() => undefined);
      else await requests.deleteOne({ _id: id }).catch(() => undefined);
      throw err;
    }
    const emailIds = request.emailIdsOf(result);
    // Noted before the answer is stored: replays (which count on) only start after.
    await noteOnRecords(emailIds, { $set: { request_key: request.key, request_key_seen: 1 } }).catch(
      (err: unknown) => logger.warn({ err }, 'idempotency key not noted on the records'),
    );
    await lease.stop();
    await finish(id, { result }, emailIds);
    return result;
  }

  async function finish(id: string, answer: StoredAnswer, emailIds: string[]): Promise<void> {
    try {
      await requests.updateOne({ _id: id }, { $set: { state: 'done', answer, email_ids: emailIds } });
    } catch (err) {
      // The lease will lapse and later requests get "did not finish", never a second send.
      logger.error({ err, request: id }, 'idempotent answer not stored');
    }
  }

  /** A later request with the key: counted, then answered like the first. */
  async function replay<T>(doc: RequestDoc): Promise<{ result: T; replayed: true }> {
    await lock.run(doc._id, async () => {
      await requests.updateOne({ _id: doc._id }, { $inc: { seen: 1 } });
      await noteOnRecords(doc.email_ids, { $inc: { request_key_seen: 1 } });
    });
    const answer = doc.answer ?? {};
    if (answer.error) throw new ReplayedFailure(answer.error.kind, answer.error.message);
    return { result: answer.result as T, replayed: true };
  }

  /** Deletes keys older than IDEMPOTENCY_KEY_TTL_MS, hourly (FerretDB has no TTL indexes). */
  async function purgeExpired(): Promise<number> {
    const { deletedCount } = await requests.deleteMany({ expires_at: { $lte: new Date() } });
    return deletedCount;
  }
  const purge = setInterval(() => {
    purgeExpired().catch((err: unknown) => logger.warn({ err }, 'purging expired idempotency keys failed'));
  }, PURGE_INTERVAL_MS).unref();

  return {
    async once<T>(request: IdempotentRequest<T>) {
      if (request.companyId === undefined)
        throw new MailroomError('validation', IDEMPOTENCY_KEY_NEEDS_AUTHENTICATION);
      const key = checkIdempotencyKey(request.key);
      const scope =
        request.organizationId === undefined
          ? request.companyId
          : `${request.companyId}:${request.organizationId}`;
      const id = `${request.test ? 'test:' : ''}${scope}/${key}`;
      const bodyHash = await hashOf(request.kind, request.body);
      const waitUntil = Date.now() + WAIT_MS;
      /** Whether this request found the key's first request running: then its answer is this one's. */
      let waited = false;

      for (;;) {
        const now = new Date();
        try {
          await requests.insertOne({
            _id: id,
            company_id: request.companyId,
            ...(request.organizationId === undefined ? {} : { organization_id: request.organizationId }),
            key,
            kind: request.kind,
            body_hash: bodyHash,
            state: 'running',
            lease_until: new Date(now.getTime() + LEASE_MS),
            answer: null,
            email_ids: [],
            seen: 1,
            created_at: now,
            expires_at: new Date(now.getTime() + IDEMPOTENCY_KEY_TTL_MS),
          });
          return { result: await runFirst(id, request), replayed: false };
        } catch (err) {
          if (!isDuplicateKeyError(err)) throw err;
        }
        const doc = await requests.findOne({ _id: id });
        if (!doc) continue; // the first request freed the key in between
        if (doc.expires_at <= now) {
          // Only that expired document (a scan on FerretDB, on this rare path): a
          // concurrent request may already have replaced it with a fresh one.
          await requests.deleteOne({ _id: id, expires_at: doc.expires_at });
          continue;
        }
        if (doc.state === 'released' && !waited) {
          // The caller's retry after a failure that sent nothing (its body maybe
          // fixed): the key is free. Only that released document: another retry
          // may have taken the key already.
          await requests.deleteOne({ _id: id, state: 'released' });
          continue;
        }
        if (doc.body_hash !== bodyHash || doc.kind !== request.kind)
          throw new MailroomError('conflict', IDEMPOTENCY_KEY_BODY_MISMATCH);
        if (doc.state === 'done' || doc.state === 'released') return replay<T>(doc);
        if (doc.lease_until <= now) throw new MailroomError('conflict', IDEMPOTENCY_KEY_UNFINISHED);
        if (Date.now() >= waitUntil) throw new MailroomError('conflict', IDEMPOTENCY_KEY_IN_PROGRESS);
        waited = true;
        await sleep(POLL_MS);
      }
    },

    stop() {
      clearInterval(purge);
    },
  };
}
