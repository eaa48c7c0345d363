import { MailroomError } from '../../core/errors.ts';

/**
 * A key holder's body this size or smaller is refused only when its company
 * holds its half already, never because the gateway is full: every JSON route
 * but a send takes at most 64 KB, and a send without large attachments stays
 * far below it.
 */
export const FREE_BODY_BYTES = 1024 * 1024;

/**
 * The room callers without valid credentials share, as a part of
 * BODY_BYTES_IN_FLIGHT_MB, kept apart from (on top of) key holders' room:
 * 16 MiB by default, a network 8. It holds some 20 of SendGrid's largest
 * webhook posts (768 KB), or 250 signup sends (64 KB), at once.
 */
export const ANONYMOUS_SHARE = 1 / 8;

/** Seconds a refused caller is told to wait (`Retry-After`): a large body in flight is done in a few. */
export const BODY_BUDGET_RETRY_SECONDS = 2;

export const COMPANY_BODIES_BUSY = 'too many large request bodies in flight for this company. retry shortly.';
export const GATEWAY_BODIES_BUSY = 'too many large request bodies in flight. retry shortly.';
export const NETWORK_BODIES_BUSY = 'too many request bodies in flight from this network. retry shortly.';
export const ANONYMOUS_BODIES_BUSY = 'too many request bodies in flight without credentials. retry shortly.';

/**
 * How many bytes of request bodies one gateway holds at once, and who may
 * hold how many of them: two rooms, one for callers with valid credentials
 * (`companies`) and one for everyone else (`anonymous`).
 *
 * Why: a body is held three or four times over while it is handled (the text,
 * the parsed value, decoded attachments, the provider's message), and parsing
 * a large one holds the event loop for a moment. Each body is bounded by its
 * route (45 MB for a send), but sixteen 40 MB sends at once took a gateway to
 * 2.4 GB and kept /health waiting 3.4 s. Bytes are counted as they arrive
 * (decoded), or at once when Content-Length announces them, and held until
 * the answer has gone; a body that would take its holder past its share is
 * refused 429, one that would take its room past the whole 503, both with
 * `Retry-After`, before (with Content-Length) or as soon as (without) it
 * crosses the line. A holder's share is half its room, so no holder takes a
 * whole room.
 *
 * Key holders (`companies`, the whole BODY_BYTES_IN_FLIGHT_MB, a company
 * half): bodies of at most FREE_BODY_BYTES are counted against their
 * company's half too (else 130 of them, each announcing 1 MiB and trickling,
 * held the whole room and every other company's large sends got 503), but
 * never refused because the gateway is full.
 *
 * Callers without valid credentials (`anonymous`: no key, public routes such
 * as SendGrid's webhook; ANONYMOUS_SHARE of it, a client network half): a
 * room of their own, because anyone may open such a request from any number
 * of networks. When they shared key holders' room, three networks trickling
 * webhook bodies announced at 5 MB held all of it with 86 sockets, and every
 * key holder's send over 1 MiB got 503. Here all of them together hold at most
 * their room, and every body counts against it, small ones too (no
 * exemption: a thousand 64 KB bodies would fill it as well as sixteen 1 MiB
 * ones), so nothing they send changes what key holders can.
 */
export class BodyBudget {
  readonly companies: BodyRoom;
  readonly anonymous: BodyRoom;

  constructor(total: number) {
    this.companies = new BodyRoom(total, {
      holderBusy: COMPANY_BODIES_BUSY,
      roomBusy: GATEWAY_BODIES_BUSY,
      exempt: FREE_BODY_BYTES,
    });
    this.anonymous = new BodyRoom(Math.floor(total * ANONYMOUS_SHARE), {
      holderBusy: NETWORK_BODIES_BUSY,
      roomBusy: ANONYMOUS_BODIES_BUSY,
      exempt: 0,
    });
  }
}

/** How a room refuses: its messages, and the size up to which a body passes a full room. */
interface RoomRules {
  /** A holder's half is full: 429. */
  holderBusy: string;
  /** The room is full: 503. */
  roomBusy: string;
  /** A body of at most this many bytes is refused only for a full half, never for a full room. */
  exempt: number;
}

/** Bytes of bodies held, in all and by each holder; a holder at most half of `total`. */
export class BodyRoom {
  private used = 0;
  private readonly usedBy = new Map<string, number>();
  readonly perHolder: number;

  constructor(
    readonly total: number,
    private readonly rules: RoomRules,
  ) {
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
    if (mine + more > this.perHolder) throw busy(this.rules.holderBusy, 'rate_limited');
    if (bodySize > this.rules.exempt && this.used + more > this.total)
      throw busy(this.rules.roomBusy, 'unavailable');
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

/** What one body holds of a BodyRoom: grows as the body does, released once. */
export class BodyAccount {
  private bytes = 0;
  private closed = false;

  constructor(
    private readonly room: BodyRoom,
    private readonly holder: string,
  ) {}

  /** The body is `size` bytes now (never shrinks): takes the growth, or throws (429/503) and takes none. */
  grow(size: number): void {
    if (this.closed || size <= this.bytes) return;
    this.room.take(this.holder, size - this.bytes, size);
    this.bytes = size;
  }

  /** Gives everything back; later growth is not counted. */
  release(): void {
    if (this.closed) return;
    this.closed = true;
    this.room.give(this.holder, this.bytes);
    this.bytes = 0;
  }
}

const busy = (message: string, kind: 'rate_limited' | 'unavailable') =>
  new MailroomError(kind, message, { retryAfterSeconds: BODY_BUDGET_RETRY_SECONDS });
