import type { IncomingMessage } from 'node:http';
import { pipeline, Transform, type Readable, type TransformCallback } from 'node:stream';
import { createBrotliDecompress, createUnzip } from 'node:zlib';
import { HttpError } from '../http-error.ts';
import { BODY_TOO_LARGE } from './error-handler.ts';
import type { BodyAccount } from './body-budget.ts';
import { JsonShapeError, JsonShapeScanner } from './json-shape.ts';

export const UNSUPPORTED_ENCODING = 'unsupported content encoding. use gzip, deflate, br or none.';
/** A route whose sender never compresses (a provider's signed webhook) takes the body as sent. */
export const UNCOMPRESSED_ONLY = 'this route takes an uncompressed body (no content encoding).';
export const MALFORMED_COMPRESSED_BODY = 'malformed compressed body.';
export const REQUEST_ABORTED = 'request aborted.';
export const BODY_NOT_RECEIVED = 'request body not received in time.';

/**
 * A compressed body may decode to this many times its compressed bytes, past
 * its first COMPRESSED_FREE_MB. Compression is for bandwidth, and what a
 * send carries compresses 1.3× (base64 attachments) to about 10× (HTML); a
 * 64 KB gzip of one repeated escape decoded to 44 MB, which the gateway then
 * parsed and validated on its event loop for 150–210 ms: a stall bought for
 * 64 KB. Past this ratio the body is refused while it streams in; the first
 * 4 MB (≈ 25 ms of parsing) are free, so a newsletter's repetitive HTML
 * compressed 50× still goes through.
 */
export const MAX_COMPRESSION_RATIO = 20;
export const COMPRESSED_FREE_MB = 4;
const COMPRESSED_FREE_BYTES = COMPRESSED_FREE_MB * 1024 * 1024;
export const COMPRESSION_RATIO_TOO_HIGH = `compressed request body expands more than ${MAX_COMPRESSION_RATIO} times past its first ${COMPRESSED_FREE_MB} MB. send it uncompressed.`;

/**
 * After the first `receiveMs`, a body must keep arriving at this rate on
 * average: each 500 bytes received buys one more second (Apache's
 * mod_reqtimeout default, `body=20,MinRate=500`).
 */
export const BODY_MIN_BYTES_PER_SECOND = 500;

/** What a route lets a body be: its size after decoding, its JSON shape, and its codings. */
export interface BodyBounds {
  /** Bytes, counted after decompression (and before it: a coding cannot hide a large upload). */
  limit: number;
  maxDepth: number;
  maxValues: number;
  /** Items one array may hold. */
  maxItems: number;
  /** A field's own message for its array past `maxItems`, by key (json-shape.ts). */
  arrayMessages?: Readonly<Record<string, string>>;
  /** Content-Encoding accepted besides `identity`. */
  compressed: boolean;
  /** Time the body has to arrive, plus a second per BODY_MIN_BYTES_PER_SECOND bytes received. */
  receiveMs: number;
  /** The gateway's room for bodies: grown by Content-Length, then by the decoded bytes (body-budget.ts). */
  account?: BodyAccount;
}

type Decoder = () => Transform;
const DECODERS: Record<string, Decoder | undefined> = {
  // createUnzip reads a gzip or a zlib header: "deflate" is sent both ways in the wild.
  gzip: createUnzip,
  'x-gzip': createUnzip,
  deflate: createUnzip,
  br: createBrotliDecompress,
};

/**
 * The request's body as the parser should read it: decoded from its
 * Content-Encoding, counted, and its JSON shape checked chunk by chunk as it
 * arrives, so a bound is found as soon as it is crossed and reading stops
 * there. Nothing is buffered here; decompression runs on libuv's thread pool
 * in 16 KB steps.
 *
 * Refused before a byte is read: a coding other than gzip, deflate, br
 * (415), any coding on a route that takes none (415), a Content-Length
 * over the limit (413), or one the gateway has no room for (429, 503:
 * body-budget.ts). While reading: more bytes than the limit, before or after
 * decoding (413); a compressed body decoding to more than MAX_COMPRESSION_RATIO
 * times its bytes past its first 4 MB (413); more than there is room for (429,
 * 503); a shape bound (400); a
 * coding that does not decode (400); a body that arrives too slowly (408,
 * `receiveMs` and BODY_MIN_BYTES_PER_SECOND: a client that announces a body
 * and sends it a byte at a time, or never, holds its socket no longer than
 * that). The request itself is never destroyed,
 * only detached, so the answer still reaches the client; what it still sends
 * is discarded unread until the error handler closes the connection.
 *
 * The stream carries the `headers` the body parser (co-body) looks at,
 * describing what it yields: decoded, length unknown.
 */
export function boundedBody(req: IncomingMessage, bounds: BodyBounds): Readable & { headers: object } {
  const coding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  const encoded = coding !== 'identity' && coding !== '';
  const decoder = encoded ? DECODERS[coding] : undefined;
  if (encoded && !bounds.compressed) throw new HttpError(415, UNCOMPRESSED_ONLY);
  if (encoded && !decoder) throw new HttpError(415, UNSUPPORTED_ENCODING);
  const declared = Number(req.headers['content-length']);
  if (declared > bounds.limit) throw new HttpError(413, BODY_TOO_LARGE);
  const { account } = bounds;
  if (declared > 0) account?.grow(declared);

  const scanner = new JsonShapeScanner(
    bounds.maxDepth,
    bounds.maxValues,
    bounds.maxItems,
    bounds.arrayMessages,
  );
  // A compressed body is counted as it arrives too: before decoding, then after.
  const compressed = decoder ? new ByteGuard(bounds.limit) : undefined;
  const checked = new ByteGuard(bounds.limit, (chunk, seen) => {
    if (compressed && seen > COMPRESSED_FREE_BYTES + MAX_COMPRESSION_RATIO * compressed.bytes)
      throw new HttpError(413, COMPRESSION_RATIO_TOO_HIGH);
    account?.grow(seen);
    scanner.write(chunk);
  });
  let out: Readable;
  let first: Transform;
  if (decoder && compressed) {
    const inflate = decoder();
    // Listening before pipeline() does: the parser sees this error, not zlib's (a 400, not a 500).
    inflate.once('error', () => checked.destroy(new HttpError(400, MALFORMED_COMPRESSED_BODY)));
    first = compressed;
    out = pipeline(first, inflate, checked, () => undefined);
  } else {
    first = checked;
    out = checked;
  }
  // The request is piped, never part of the pipeline: an error detaches it
  // (pipe unpipes from a closed destination) without destroying the socket.
  req.pipe(first);
  const aborted = () => {
    if (!req.complete) first.destroy(new HttpError(400, REQUEST_ABORTED));
  };
  req.once('close', aborted);
  out.once('close', () => req.off('close', aborted));
  if (!req.complete) requireMinimumRate(req, first, bounds.receiveMs);
  // Refused midway: the rest is discarded, not read into anything.
  first.once('close', () => req.unpipe(first).resume());
  return Object.assign(out, {
    headers: { ...req.headers, 'content-encoding': 'identity', 'content-length': undefined },
  });
}

/**
 * Fails `first` with 408 once the body has taken longer than `receiveMs`
 * plus a second per BODY_MIN_BYTES_PER_SECOND bytes received. One timer per
 * body, moved on only when it fires: counting a chunk costs an addition.
 */
function requireMinimumRate(req: IncomingMessage, first: Transform, receiveMs: number): void {
  const started = Date.now();
  let received = 0;
  const count = (chunk: Buffer) => {
    received += chunk.length;
  };
  const check = () => {
    const left = started + receiveMs + (received / BODY_MIN_BYTES_PER_SECOND) * 1000 - Date.now();
    if (left > 0) timer = setTimeout(check, left).unref();
    else first.destroy(new HttpError(408, BODY_NOT_RECEIVED));
  };
  let timer = setTimeout(check, receiveMs).unref();
  const stop = () => {
    clearTimeout(timer);
    req.off('data', count);
  };
  req.on('data', count);
  req.once('end', stop);
  first.once('close', stop);
}

/** Passes bytes through up to `limit` (more → 413), showing each chunk, and the bytes so far, to `inspect` first. */
class ByteGuard extends Transform {
  private seen = 0;

  /** Bytes passed so far. */
  get bytes(): number {
    return this.seen;
  }

  constructor(
    private readonly limit: number,
    private readonly inspect?: (chunk: Buffer, seen: number) => void,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.seen += chunk.length;
    if (this.seen > this.limit) return done(new HttpError(413, BODY_TOO_LARGE));
    try {
      this.inspect?.(chunk, this.seen);
    } catch (err) {
      return done(err instanceof JsonShapeError ? new HttpError(400, err.message) : (err as Error));
    }
    done(null, chunk);
  }
}
