import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';
import { Webhook } from 'standardwebhooks';
import { addressFilter } from '../address-filter.ts';

/** Response bytes read (and kept in the delivery's error) at most. */
const RESPONSE_SNIPPET_BYTES = 200;

export interface PostResult {
  /** The endpoint's HTTP status, or null when none came (refused address, timeout, connection error). */
  status: number | null;
  error: string | null;
}

/**
 * The three Standard Webhooks headers for one attempt: `webhook-id` (the
 * event's id, the same on every attempt and replay), `webhook-timestamp`
 * (this attempt, seconds) and `webhook-signature`, one `v1,<HMAC-SHA256>`
 * per secret that signs now (during a rotation, the new and the old one),
 * space-separated as the specification allows.
 */
export function signedHeaders(eventId: string, payload: string, secrets: readonly string[], at = new Date()) {
  const signature = secrets.map((secret) => new Webhook(secret).sign(eventId, at, payload)).join(' ');
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signature,
  };
}

/**
 * POSTs one attempt. The connection goes through request-filtering-agent,
 * which checks the address actually connected to (after DNS) and refuses
 * private, loopback and metadata ones unless `allowedAddresses` names them;
 * redirects are not followed (a 3xx is a failed attempt). The whole exchange
 * has `timeoutMs`.
 */
export function createWebhookPoster(options: { timeoutMs: number; allowedAddresses: readonly string[] }) {
  const filter = { ...addressFilter(options.allowedAddresses), keepAlive: true };
  const agents = {
    http: new RequestFilteringHttpAgent(filter),
    https: new RequestFilteringHttpsAgent(filter),
  };
  return function post(url: string, body: string, headers: Record<string, string>): Promise<PostResult> {
    return new Promise((resolve) => {
      const target = new URL(url);
      const secure = target.protocol === 'https:';
      const req = (secure ? httpsRequest : httpRequest)(
        target,
        {
          method: 'POST',
          agent: secure ? agents.https : agents.http,
          headers: {
            ...headers,
            'content-type': 'application/json',
            'content-length': String(Buffer.byteLength(body)),
            'user-agent': 'Mailroom-Webhooks/1',
          },
          signal: AbortSignal.timeout(options.timeoutMs),
        },
        (res) => {
          const status = res.statusCode ?? 0;
          let snippet = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            if (snippet.length < RESPONSE_SNIPPET_BYTES) snippet += chunk.slice(0, RESPONSE_SNIPPET_BYTES);
          });
          res.on('end', () =>
            resolve({
              status,
              error:
                status >= 200 && status < 300
                  ? null
                  : `HTTP ${status}${snippet ? `: ${snippet.slice(0, RESPONSE_SNIPPET_BYTES)}` : ''}`,
            }),
          );
          res.on('error', (err) => resolve({ status, error: err.message }));
        },
      );
      req.on('error', (err) => resolve({ status: null, error: describe(err) }));
      req.end(body);
    });
  };
}

function describe(err: Error): string {
  if (err.name === 'AbortError' || err.name === 'TimeoutError') return 'timed out';
  // request-filtering-agent: "DNS lookup 127.0.0.1(family:4, host:…) is not allowed. Because, It is private IP address."
  if (/is not allowed/.test(err.message))
    return 'refused: the endpoint resolves to a private or reserved address';
  return err.message;
}
