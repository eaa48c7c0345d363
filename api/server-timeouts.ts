import type { Server } from 'node:http';

/**
 * Node's own bounds on the gateway's sockets, set here rather than left to
 * the defaults of whichever Node version runs it (docs/api.md):
 * - keepAliveTimeout: an idle keep-alive connection is closed after this. Longer
 *   than the idle timeout of common load balancers (60 s), so the balancer
 *   closes first and never sends a request on a connection we are closing.
 * - headersTimeout: a client has this long to send a request's headers
 *   (slowloris); Node wants it above keepAliveTimeout.
 * - requestTimeout: the whole request (headers and body) must arrive within
 *   this, with room for the largest attachment body on a slow link.
 * The answer's own time is bounded by the request deadline
 * (api/middleware/request-deadline.ts).
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;
export const HEADERS_TIMEOUT_MS = 66_000;
export const REQUEST_TIMEOUT_MS = 120_000;

export function applyServerTimeouts(server: Server): void {
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
}
