import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';

/**
 * How the gateway stops (SIGTERM) without cutting a request a client already
 * sent. Node's `server.close()` stops listening and at once destroys every
 * connection with no request in flight, which under load includes
 * connections whose request the event loop simply has not read yet, and
 * closing the listening socket resets the connections still queued in the
 * kernel (their clients had connected and written their request): they all
 * see a reset, never an answer. Measured under a burst: 30 of 90 requests
 * on connections open 0.7–0.9 s.
 *
 * So, in order:
 * 1. Draining: every answer from now on carries `Connection: close` (the
 *    client opens its next connection elsewhere), and `/ready` answers 503,
 *    so a balancer takes this gateway out.
 * 2. Accept on until the listening socket has been quiet for
 *    ACCEPT_QUIET_MS (at most ACCEPT_FOR_MS): the kernel's queue is emptied
 *    into connections that get answered; then stop listening.
 * 3. A connection with no request in flight is closed once it has been idle
 *    for IDLE_GRACE_MS, so a request written just before (on a new
 *    connection, or the next one on a keep-alive connection) is read and
 *    answered first; a connection with a request in flight closes after its
 *    answer.
 * 4. Whatever is still open at `graceMs` (SHUTDOWN_GRACE_SECONDS) is cut:
 *    longer than the provider's 30 s timeout by default, so a send waiting
 *    on the provider is answered, not cut while its request is on the wire.
 */
export const ACCEPT_QUIET_MS = 250;
export const ACCEPT_FOR_MS = 2_000;
export const IDLE_GRACE_MS = 1_000;
const CHECK_EVERY_MS = 100;

interface Tracked {
  /** When it connected, or last started or finished a request while draining. */
  lastActive: number;
}

/** The answer a connection is writing (Node's own field; what graceful-shutdown libraries read too). */
const answering = (socket: Socket) =>
  (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage ?? undefined;

export interface GracefulDrain {
  /** True once drain() was called. */
  readonly draining: boolean;
  /** Runs steps 1–4; resolves when every connection is closed (or cut at `graceMs`). */
  drain(graceMs: number): Promise<{ cut: number }>;
}

/**
 * Tracks `server`'s connections from now on (call before it listens). Until
 * drain() nothing is done per request (a connection is counted once, however
 * many requests it carries): the tracking pixel's answers cost a few tens of
 * microseconds, and a listener per request would be a visible part of that.
 */
export function gracefulDrain(server: Server): GracefulDrain {
  const connections = new Map<Socket, Tracked>();
  let draining = false;
  let lastConnection = Date.now();

  server.on('connection', (socket: Socket) => {
    lastConnection = Date.now();
    connections.set(socket, { lastActive: lastConnection });
    socket.once('close', () => connections.delete(socket));
  });

  /** While draining: every answer closes its connection; a request counts as activity. */
  function onRequestWhileDraining(req: IncomingMessage, res: ServerResponse): void {
    if (!res.headersSent) res.setHeader('Connection', 'close');
    const tracked = connections.get(req.socket);
    if (!tracked) return;
    tracked.lastActive = Date.now();
    res.once('close', () => (tracked.lastActive = Date.now()));
  }

  async function stopAccepting(): Promise<void> {
    const started = Date.now();
    // Quiet counts from the drain's start at the earliest: connections queued while the loop was
    // held have not been accepted yet, so an old last connection says nothing about the queue.
    const quietFor = () => Date.now() - Math.max(lastConnection, started);
    while (Date.now() - started < ACCEPT_FOR_MS && quietFor() < ACCEPT_QUIET_MS) await sleep(CHECK_EVERY_MS);
    if (!server.listening) return;
    // net.Server's close: stops listening without http.Server's closing of idle connections (step 3 does that).
    await new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
  }

  return {
    get draining() {
      return draining;
    },
    async drain(graceMs) {
      draining = true;
      const started = Date.now();
      const deadline = started + graceMs;
      server.on('request', onRequestWhileDraining);
      // Answers not written yet close their connection after them; an idle connection
      // gets IDLE_GRACE_MS from now for a request its client may just have written.
      for (const [socket, tracked] of connections) {
        const res = answering(socket);
        if (res && !res.headersSent) res.setHeader('Connection', 'close');
        tracked.lastActive = Math.max(tracked.lastActive, started);
      }
      const closed = stopAccepting();
      while (Date.now() < deadline) {
        const now = Date.now();
        for (const [socket, tracked] of connections)
          if (!answering(socket) && now - tracked.lastActive >= IDLE_GRACE_MS) socket.destroy();
        if (connections.size === 0 && !server.listening) break;
        await sleep(CHECK_EVERY_MS);
      }
      const cut = connections.size;
      for (const socket of connections.keys()) socket.destroy();
      await closed;
      return { cut };
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
