import { MailroomError } from '../../core/errors.ts';

/**
 * A body this size or smaller is refused only when its company holds its
 * half already, never because the gateway is full: every JSON route but a
 * send takes at most 64 KB, and a send without large attachments stays far
 * below it.
 */
export const FREE_BODY_BYTES = 1024 * 1024;

/** Seconds a refused caller is told to wait (`Retry-After`): a large body in flight is done in a few. */
export const BODY_BUDGET_RETRY_SECONDS = 2;

export const COMPANY_BODIES_BUSY = 'too many large request bodies in flight for this company. retry shortly.';
export const GATEWAY_BODIES_BUSY = 'too many large request bodies in flight. retry shortly.';

/**
 * How many bytes of request bodies one gateway holds at once, and how many of
 * them one company may hold.
 *
 * Why: a body is held three or four times over while it is handled (the text,
 * the parsed value, decoded attachments, the provider's message), and parsing
 * a large one holds the event loop for a moment. Each body is bounded by its
 * route (45 MB for a send), but sixteen 40 MB sends at once took a gateway to
 * 2.4 GB and kept /health waiting 3.4 s. Bytes are counted as they arrive
 * (decoded), or at once when Content-Length announces them, and held until
 * the answer has gone; a body that would take a company past its share is
 * refused 429, one that would take the gateway past the whole 503, both with
 * `Retry-After`, before (with Content-Length) or as soon as (without) it
 * crosses the line. A company's share is half the whole, so no company takes
 * all the room. Bodies of at most FREE_BODY_BYTES are counted against their
 * company's half too (else 130 of them, each announcing 1 MiB and trickling,
 * held the whole room and every other company's large sends got 503), but
 * never refused because the gateway is full.
 */
export class BodyBudget {
  private used = 0;
  private readonly usedBy = new Map<string, number>();
  readonly perHolder: number;

  constructor(readonly total: number) {
    this.perHolder = Math.floor(total / 2);
  }

  /** The account of one body, charged to `holder` (its company, or its client's network). */
  open(holder: string): BodyAccount {
    return new BodyAccount(this, holder);
  }

  /** Bytes held now, in all and by `holder` (for tests and metrics). */
  held(holder?: string): number {
    return holder === undefined ? this.used : (this.usedBy.get(holder) ?? 0);
  }

  /** @internal Takes `more` bytes for `holder`, or throws without taking any. */
  take(holder: string, more: number, bodySize: number): void {
    const mine = this.usedBy.get(holder) ?? 0;
    if (mine + more > this.perHolder) throw busy(COMPANY_BODIES_BUSY, 'rate_limited');
    if (bodySize > FREE_BODY_BYTES && this.used + more > this.total)
      throw busy(GATEWAY_BODIES_BUSY, 'unavailable');
    this.used += more;
    this.usedBy.set(holder, mine + more);
  }

  /** @internal */
  give(holder: string, bytes: number): void {
    this.used -= bytes;
    const left = (this.usedBy.get(holder) ?? 0) - bytes;
    if (left > 0) this.usedBy.set(holder, left);
    else this.usedBy.delete(holder);
  }
}

/** What one body holds of a BodyBudget: grows as the body does, released once. */
export class BodyAccount {
  private bytes = 0;
  private closed = false;

  constructor(
    private readonly budget: BodyBudget,
    private readonly holder: string,
  ) {}

  /** The body is `size` bytes now (never shrinks): takes the growth, or throws (429/503) and takes none. */
  grow(size: number): void {
    if (this.closed || size <= this.bytes) return;
    this.budget.take(this.holder, size - this.bytes, size);
    this.bytes = size;
  }

  /** Gives everything back; later growth is not counted. */
  release(): void {
    if (this.closed) return;
    this.closed = true;
    this.budget.give(this.holder, this.bytes);
    this.bytes = 0;
  }
}

const busy = (message: string, kind: 'rate_limited' | 'unavailable') =>
  new MailroomError(kind, message, { retryAfterSeconds: BODY_BUDGET_RETRY_SECONDS });
