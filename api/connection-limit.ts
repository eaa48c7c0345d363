import type { Server } from 'node:http';
import proxyaddr from 'proxy-addr';
import { clientNetwork } from '../core/email/signup/index.ts';
import { createKeyedSlots } from '../core/keyed-slots.ts';

const REFUSAL = JSON.stringify({ success: false, error: 'too many open connections from this client.' });

/**
 * At most `perClient` open connections from one client network (an IPv4
 * address, an IPv6 /64, loopback as one host; the network the signup limits
 * count by), the addresses of TRUSTED_PROXIES excepted: behind them every
 * client arrives as the proxy, which keeps its own limits. One more is
 * answered 429 and closed at once. Measured before: 20,000 connections that
 * never finished their headers, sent from one address without credentials,
 * used up the process's file descriptors, and /health went unanswered.
 */
export function limitConnectionsPerClient(
  server: Server,
  options: { perClient: number; trustedProxies: readonly string[]; onRefused?: () => void },
): void {
  const trusted = proxyaddr.compile([...options.trustedProxies]);
  const connections = createKeyedSlots(options.perClient);
  server.on('connection', (socket) => {
    const address = socket.remoteAddress;
    if (address === undefined || trusted(address, 0)) return;
    const release = connections.take(clientNetwork(address));
    if (!release) {
      options.onRefused?.();
      socket.end(
        `HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(REFUSAL)}\r\nConnection: close\r\n\r\n${REFUSAL}`,
      );
      socket.destroySoon();
      return;
    }
    socket.once('close', release);
  });
}
