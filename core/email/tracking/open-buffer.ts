import type { Logger } from '../../logger.ts';

/**
 * The pixel's opens and the tracked links' clicks, buffered in memory and
 * written in batches (group commit), so `GET /api/email/track` answers its GIF
 * and `GET /api/email/click/{token}` its redirect without waiting on the database:
 * a campaign opened at once, or a privacy proxy pre-fetching every image, is
 * a burst of cheap map insertions instead of a queue of serialised writes.
 *
 * - Coalescing: repeated hits of one key between two flushes are one entry
 *   (the first and the latest time are kept: `opened_at` is the first open,
 *   `time` the latest).
 * - Batches: `flushIntervalMs` (500 ms) after the first hit, whatever is
 *   buffered is handed to `write` as one batch (record-store.ts `applyOpens`:
 *   the key checks, then bulk writes of 25 updates). One flush at a time;
 *   what arrives meanwhile waits for the next, which starts an interval after
 *   this one ENDS: a database slower than the interval is never written to
 *   back to back (it had the CPU to itself beside the gateway), and the
 *   longer wait coalesces more repeats. Measured with the bench's 5,000 hot
 *   emails on FerretDB: pixel 0.38 → 0.47, click 0.28 → 0.34.
 * - Bounded: at most `maxPending` distinct keys wait; past that, new keys are
 *   dropped and counted (`stats().dropped`), with one warning per flush
 *   interval, so a flood cannot exhaust memory.
 * - Retried: a batch whose write fails (database down, a conflict) goes back
 *   into the buffer, merged with what arrived meanwhile, and is written again
 *   after a backoff that doubles from the interval up to `MAX_RETRY_DELAY_MS`
 *   (5 s), for as long as the process lives. The writes are idempotent
 *   (`$set`, `$min`, `$max`), so a retry of a batch that was in fact written
 *   changes nothing. Only what does not fit the bound, or a batch that fails
 *   at shutdown, is lost: counted (`stats().failed`) and logged.
 * - Durability: `close()` (the gateway's SIGTERM/SIGINT shutdown) stops the
 *   timer and flushes what is left. Only a crash loses the opens of the last
 *   interval (or of a database outage still being retried).
 *
 * Metrics: `stats()` has running totals, and `onFlush` is called after each
 * batch (the hook for a metrics module: recorded / dropped / failed counts).
 */

/**
 * One buffered open. A pixel open names its email by view key (checked
 * against the record when written); a click by the email id its signed token
 * carries (the signature is the check) and also sets `clicked`.
 */
export interface BufferedOpen {
  /** Pixel opens: the view key. */
  viewKey?: string;
  /** Clicks: the email id. */
  emailId?: string;
  /** A click (counts as an open as well). */
  clicked?: boolean;
  /** First hit of this key in the batch. */
  first: Date;
  /** Latest hit of this key in the batch. */
  last: Date;
}

export interface OpenBufferStats {
  /** Hits accepted into the buffer (repeats of a buffered key included). */
  accepted: number;
  /** Hits refused because the buffer was full. */
  dropped: number;
  /** Opens the database recorded (a known key whose secret part matched). */
  recorded: number;
  /** Buffered opens lost with a failed write: no room to keep them for a retry, or shutting down. */
  failed: number;
  /** Buffered opens whose write failed and that went back into the buffer for another try. */
  retried: number;
  /** Batches written. */
  flushes: number;
  /** Distinct keys waiting for the next flush. */
  pending: number;
}

export interface FlushReport {
  batch: number;
  recorded: number;
  /** Opens of this batch lost (the write failed and they could not be kept for a retry). */
  failed: number;
  /** Opens of this batch kept for a retry after the write failed. */
  retried: number;
  droppedSinceLastFlush: number;
  ms: number;
}

export interface OpenBufferOptions {
  /** Writes one batch; resolves with how many opens it recorded. */
  write: (opens: BufferedOpen[]) => Promise<number>;
  logger: Logger;
  flushIntervalMs?: number;
  maxPending?: number;
  /** Called after every flush (metrics). */
  onFlush?: (report: FlushReport) => void;
}

/**
 * 500 ms: a hot email's repeated opens (a privacy proxy's prefetch, a forwarded newsletter)
 * become one write per half second. With the bench's 5,000 hot emails, medians of three:
 * pixel 0.452 → 0.491, click 0.327 → 0.376 (docs/benchmarks.md). Hosted services report opens
 * seconds to minutes later; half a second is not seen.
 */
export const OPEN_FLUSH_INTERVAL_MS = 500;
/** ~200 bytes per buffered key: 100,000 keys ≈ 20 MB at most. */
export const OPEN_BUFFER_MAX_PENDING = 100_000;
/** The longest wait between two tries of a failed batch. */
export const MAX_RETRY_DELAY_MS = 5_000;

/** The pixel's open buffer: opens queue here and are written in bulk by `flush`. */
export type { OpenBuffer };

export function createOpenBuffer(options: OpenBufferOptions): OpenBuffer {
  return new OpenBuffer(options);
}

/** When a buffered key was hit: first and latest, in ms since the epoch (numbers: no `Date` per hit). */
interface HitTimes {
  first: number;
  last: number;
}

/** What waits for the next flush: pixel opens by view key, clicks by email id. */
interface Pending {
  opens: Map<string, HitTimes>;
  clicks: Map<string, HitTimes>;
}

const nothingPending = (): Pending => ({ opens: new Map(), clicks: new Map() });

class OpenBuffer {
  private pending = nothingPending();
  private readonly totals = { accepted: 0, dropped: 0, recorded: 0, failed: 0, retried: 0, flushes: 0 };
  /** Consecutive failed writes: the next flush waits intervalMs × 2^failures (capped). */
  private failures = 0;
  private droppedSinceFlush = 0;
  private timer: NodeJS.Timeout | undefined;
  /** A batch is being written: the next one is timed from its end (see schedule). */
  private writing = false;
  private flushing: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly intervalMs: number;
  private readonly maxPending: number;

  constructor(private readonly options: OpenBufferOptions) {
    this.intervalMs = options.flushIntervalMs ?? OPEN_FLUSH_INTERVAL_MS;
    this.maxPending = options.maxPending ?? OPEN_BUFFER_MAX_PENDING;
  }

  /** Buffers one pixel hit at `at` (ms since the epoch); false when it was dropped (buffer full). Never waits, never throws. */
  add(viewKey: string, at: number = Date.now()): boolean {
    return this.buffer(this.pending.opens, viewKey, at);
  }

  /**
   * Buffers one click of a tracked link of `emailId` (a verified click token's);
   * coalesced per email like pixel hits per key. False when dropped (buffer full).
   */
  addClick(emailId: string, at: number = Date.now()): boolean {
    return this.buffer(this.pending.clicks, emailId, at);
  }

  private buffer(keyed: Map<string, HitTimes>, key: string, at: number): boolean {
    const existing = keyed.get(key);
    if (existing) {
      if (at > existing.last) existing.last = at;
      this.totals.accepted++;
      return true;
    }
    if (this.pendingCount() >= this.maxPending) {
      this.totals.dropped++;
      this.droppedSinceFlush++;
      this.schedule();
      return false;
    }
    keyed.set(key, { first: at, last: at });
    this.totals.accepted++;
    this.schedule();
    return true;
  }

  private pendingCount(): number {
    return this.pending.opens.size + this.pending.clicks.size;
  }

  /** Writes everything buffered so far (after any flush already running); resolves once it is written. */
  flush(): Promise<void> {
    const run = this.flushing.then(() => this.writeBatch());
    this.flushing = run;
    return run;
  }

  /** Stops the timer and writes what is left (shutdown). Later hits are written at once, one batch each. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  stats(): OpenBufferStats {
    return { ...this.totals, pending: this.pendingCount() };
  }

  private schedule(): void {
    if (this.closed) {
      void this.flush();
      return;
    }
    // While a batch is written, hits wait: the next batch starts an interval after this one
    // ends, so a database slower than the interval is never written to back to back, and a
    // hot email's repeated opens meanwhile become one update.
    if (this.timer || this.writing) return;
    const delay = Math.min(
      this.intervalMs * 2 ** this.failures,
      Math.max(this.intervalMs, MAX_RETRY_DELAY_MS),
    );
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, delay);
    // A buffered open never keeps a process alive on its own: shutdown flushes explicitly.
    this.timer.unref();
  }

  private async writeBatch(): Promise<void> {
    const dropped = this.droppedSinceFlush;
    this.droppedSinceFlush = 0;
    if (dropped > 0)
      this.options.logger.warn(
        { dropped, droppedTotal: this.totals.dropped, maxPending: this.maxPending },
        'open buffer full: pixel opens and clicks dropped',
      );
    if (this.pendingCount() === 0) return;
    const taken = this.pending;
    const batch = batchOf(taken);
    this.pending = nothingPending();
    const started = Date.now();
    this.writing = true;
    let recorded = 0;
    let failed = 0;
    let retried = 0;
    try {
      recorded = await this.options.write(batch);
      this.failures = 0;
    } catch (err) {
      this.failures++;
      retried = this.closed ? 0 : this.requeue(taken);
      failed = batch.length - retried;
      this.options.logger.error(
        { err, opens: batch.length, retried, lost: failed, consecutiveFailures: this.failures },
        'writing a batch of pixel opens and clicks failed',
      );
    }
    this.writing = false;
    this.totals.recorded += recorded;
    this.totals.failed += failed;
    this.totals.retried += retried;
    this.totals.flushes++;
    this.options.onFlush?.({
      batch: batch.length,
      recorded,
      failed,
      retried,
      droppedSinceLastFlush: dropped,
      ms: Date.now() - started,
    });
    // Hits that arrived during the write, and a failed batch, wait for the timer (or close()).
    if (this.pendingCount() > 0) this.schedule();
  }

  /** Puts a failed batch back, merged with hits that arrived meanwhile; returns how many fit. */
  private requeue(taken: Pending): number {
    return this.merge(taken.opens, this.pending.opens) + this.merge(taken.clicks, this.pending.clicks);
  }

  private merge(taken: ReadonlyMap<string, HitTimes>, into: Map<string, HitTimes>): number {
    let kept = 0;
    for (const [key, times] of taken) {
      const newer = into.get(key);
      if (newer) {
        newer.first = Math.min(times.first, newer.first);
        newer.last = Math.max(times.last, newer.last);
      } else if (this.pendingCount() < this.maxPending) into.set(key, times);
      else continue;
      kept++;
    }
    return kept;
  }
}

/** The opens to write: the pixel's (by view key), then the clicks (by email id). */
function batchOf({ opens, clicks }: Pending): BufferedOpen[] {
  const batch: BufferedOpen[] = [];
  for (const [viewKey, { first, last }] of opens)
    batch.push({ viewKey, first: new Date(first), last: new Date(last) });
  for (const [emailId, { first, last }] of clicks)
    batch.push({ emailId, clicked: true, first: new Date(first), last: new Date(last) });
  return batch;
}
