import { get as httpGet, type IncomingMessage } from 'node:http';
import { get as httpsGet } from 'node:https';
import { basename } from 'node:path';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';
import { addressFilter } from '../../address-filter.ts';
import { MailroomError } from '../../errors.ts';
import { hasControlCharacters } from '../../validation.ts';
import { ATTACHMENT_TOO_LARGE, attachmentFetchFailed } from '../email-messages.ts';
import type { OutgoingAttachment } from './provider.ts';
import { MAX_ATTACHMENT_BYTES, MAX_TOTAL_ATTACHMENT_BYTES } from '../email-schema.ts';
import { base64DecodedLength, isMediaType, type AttachmentInput } from '../validate.ts';

/**
 * Attachments given by URL (`path`) are fetched by the server, which makes
 * every such URL a potential SSRF. The defences:
 * - http and https only;
 * - the connection goes through request-filtering-agent, which checks the
 *   address actually connected to (after DNS resolution, so DNS rebinding
 *   cannot slip a private address in) and refuses loopback, private
 *   (RFC 1918, fc00::/7), link-local (169.254/16 incl. cloud metadata,
 *   fe80::/10), unspecified, CGNAT and every other non-unicast range;
 * - redirects are followed by hand, at most 3, each hop through the same agent,
 *   and only within the origin the caller named (no bouncing elsewhere);
 * - one timeout for the whole fetch; the body is abandoned as soon as it
 *   passes the size cap.
 */

export interface FetchedFile {
  body: Buffer;
  contentType?: string | undefined;
  /** Last path segment of the final URL, when it has one. */
  filename?: string | undefined;
}

/** Fetches one URL; throws MailroomError('validation') with a clear reason. Injectable for tests. */
export type AttachmentFetcher = (url: string, options: { maxBytes: number }) => Promise<FetchedFile>;

export interface FetcherOptions {
  timeoutMs: number;
  /**
   * Addresses let through despite being private (request-filtering-agent's
   * allowIPAddressList). For tests only: never read from configuration.
   */
  allowAddresses?: string[];
}

const MAX_REDIRECTS = 3;

const refused = (reason: string) => new MailroomError('validation', attachmentFetchFailed(reason));

export function createAttachmentFetcher(options: FetcherOptions): AttachmentFetcher {
  const filter = { ...addressFilter(options.allowAddresses ?? []), keepAlive: false };
  const httpAgent = new RequestFilteringHttpAgent(filter);
  const httpsAgent = new RequestFilteringHttpsAgent(filter);

  return async function fetchAttachment(url, { maxBytes }) {
    const signal = AbortSignal.timeout(options.timeoutMs);
    let current = parseUrl(url);
    for (let hop = 0; ; hop++) {
      const response = await request(current, signal);
      const status = response.statusCode ?? 0;
      if (status >= 300 && status < 400 && response.headers.location) {
        response.resume();
        if (hop >= MAX_REDIRECTS) throw refused('too many redirects');
        current = sameOriginRedirect(response.headers.location, current);
        continue;
      }
      if (status < 200 || status >= 300) {
        response.resume();
        throw refused(`HTTP ${status}`);
      }
      const body = await readCapped(response, maxBytes, signal);
      return {
        body,
        contentType: fetchedMediaType(response.headers['content-type']),
        filename: filenameOf(current),
      };
    }
  };

  function request(url: URL, signal: AbortSignal): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const get = url.protocol === 'https:' ? httpsGet : httpGet;
      const agent = url.protocol === 'https:' ? httpsAgent : httpAgent;
      const req = get(
        url,
        { agent, signal, headers: { 'user-agent': 'mailroom-attachment-fetcher' } },
        resolve,
      );
      req.on('error', (err) => reject(describeFetchError(err, signal)));
    });
  }
}

/** The next hop of a redirect: a valid URL on the origin of the current one, else refused (400). */
function sameOriginRedirect(location: string, current: URL): URL {
  let next: URL;
  try {
    next = new URL(location, current);
  } catch {
    throw refused('invalid redirect location');
  }
  if (next.origin !== current.origin) throw refused('redirects to another origin are not allowed');
  return parseUrl(next.toString());
}

function filenameOf(url: URL): string | undefined {
  try {
    const name = basename(decodeURIComponent(url.pathname));
    // %0d%0a in a path would put CR/LF into a MIME header.
    return name && name !== '/' && !hasControlCharacters(name) ? name : undefined;
  } catch {
    return undefined;
  }
}

function parseUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refused('invalid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw refused('only http and https URLs are allowed');
  if (url.username || url.password) throw refused('credentials in URLs are not allowed');
  return url;
}

function readCapped(response: IncomingMessage, maxBytes: number, signal: AbortSignal): Promise<Buffer> {
  const declared = Number(response.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    response.destroy();
    return Promise.reject(new MailroomError('validation', ATTACHMENT_TOO_LARGE));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    response.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        response.destroy();
        reject(new MailroomError('validation', ATTACHMENT_TOO_LARGE));
        return;
      }
      chunks.push(chunk);
    });
    response.on('end', () => resolve(Buffer.concat(chunks)));
    response.on('error', (err) => reject(describeFetchError(err, signal)));
  });
}

function describeFetchError(err: unknown, signal: AbortSignal): MailroomError {
  if (signal.aborted) return refused('timed out');
  const e = err as { code?: unknown; message?: unknown };
  const message = String(e?.message ?? '');
  if (/is not allowed/.test(message)) return refused('address not allowed');
  if (e?.code === 'ENOTFOUND' || e?.code === 'EAI_AGAIN') return refused('host not found');
  if (e?.code === 'ECONNREFUSED') return refused('connection refused');
  return refused('connection failed');
}

/**
 * Turns validated attachment inputs into what the provider sends: inline ones
 * pass through, URL ones are fetched (one at a time, so the 30 MB total is
 * enforced before the next download starts).
 */
export async function resolveAttachments(
  inputs: readonly AttachmentInput[],
  fetcher: AttachmentFetcher,
): Promise<OutgoingAttachment[]> {
  const out: OutgoingAttachment[] = [];
  let total = 0;
  for (const input of inputs) {
    if (input.content !== undefined) {
      total += base64DecodedLength(input.content);
      out.push({ filename: input.filename ?? 'attachment', content: input.content, type: input.contentType });
      continue;
    }
    const remaining = MAX_TOTAL_ATTACHMENT_BYTES - total;
    const file = await fetcher(input.path ?? '', { maxBytes: Math.min(MAX_ATTACHMENT_BYTES, remaining) });
    if (file.body.length > MAX_ATTACHMENT_BYTES) throw new MailroomError('validation', ATTACHMENT_TOO_LARGE);
    total += file.body.length;
    if (total > MAX_TOTAL_ATTACHMENT_BYTES) throw new MailroomError('validation', ATTACHMENT_TOO_LARGE);
    out.push({
      filename: input.filename ?? file.filename ?? 'attachment',
      content: file.body.toString('base64'),
      type: input.contentType ?? file.contentType,
    });
  }
  return out;
}

/** The fetched file's media type without parameters; none when the server sent something else. */
function fetchedMediaType(header: string | undefined): string | undefined {
  const type = header?.split(';')[0]?.trim();
  return type && isMediaType(type) ? type : undefined;
}
