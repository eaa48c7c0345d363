import { Agent as HttpAgent, type AgentOptions } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Duplex } from 'node:stream';

/**
 * The connections SendGrid's client makes, watched until they are ready to
 * carry a request: TCP connected, and for https the TLS handshake done. A
 * request's bytes go out only after that, so a failure before it (no answer
 * to the connect, a certificate refused, a protocol error) proves the
 * provider never heard of the message, which may then go to the next
 * provider at once. After it, a failure may come after the provider took
 * the message: outcome unknown (provider.ts).
 *
 * Without a connect bound of its own, an address that drops packets held
 * each send for the client's whole 30 s timeout, which cannot tell a silent
 * connect from a silent answer: every send ended "outcome unknown" and the
 * second provider was never tried.
 */

/** Errors of connections that never became ready: the request was not written. */
const beforeReady = new WeakSet<object>();

/** True when `err` (or the error it wraps, as axios does) ended a connection before it was ready. */
export function failedBeforeConnecting(err: unknown): boolean {
  const wrapped = (err as { cause?: unknown } | null)?.cause;
  return [err, wrapped].some((e) => typeof e === 'object' && e !== null && beforeReady.has(e));
}

function watch(socket: Duplex, readyEvent: 'connect' | 'secureConnect', timeoutMs: number): void {
  let ready = false;
  const timer = setTimeout(() => {
    const err = Object.assign(new Error(`no connection within ${timeoutMs} ms`), { code: 'ECONNTIMEOUT' });
    beforeReady.add(err);
    socket.destroy(err);
  }, timeoutMs);
  socket.once(readyEvent, () => {
    ready = true;
    clearTimeout(timer);
  });
  socket.once('close', () => clearTimeout(timer));
  socket.on('error', (err: Error) => {
    if (!ready) beforeReady.add(err);
  });
}

/**
 * How long a kept-alive connection may sit idle before it is closed on our
 * side. With it set, Node also honours a server's `Keep-Alive: timeout=N`
 * hint, closing the idle connection a second before the server does (without
 * it Node ignores the hint). Otherwise a send could take a connection at the
 * moment the server closed it: ECONNRESET after the request was written,
 * "outcome unknown" for a message the provider never saw (15 of ~17,600
 * sends in a 20-minute soak against the dev sink, whose Node server closes
 * idle connections after 5 s). Requests in flight keep the client's own
 * timeout (provider.ts).
 */
const IDLE_CONNECTION_MS = 30_000;

type CreateConnection = (options: object, callback?: (err: Error | null, socket: Duplex) => void) => Duplex;

/** Keep-alive agents for http and https whose new connections are watched (`connectTimeoutMs` to be ready). */
export function createProviderAgents(connectTimeoutMs: number): {
  httpAgent: HttpAgent;
  httpsAgent: HttpsAgent;
} {
  const options: AgentOptions = { keepAlive: true, timeout: IDLE_CONNECTION_MS };
  const httpAgent = new HttpAgent(options);
  const httpsAgent = new HttpsAgent(options);
  for (const [agent, readyEvent] of [
    [httpAgent, 'connect'],
    [httpsAgent, 'secureConnect'],
  ] as const) {
    // Node's agents have createConnection; @types/node does not declare it.
    const watched = agent as unknown as { createConnection: CreateConnection };
    const create = watched.createConnection.bind(agent);
    watched.createConnection = (opts, callback) => {
      const socket = create(opts, callback);
      watch(socket, readyEvent, connectTimeoutMs);
      return socket;
    };
  }
  return { httpAgent, httpsAgent };
}
