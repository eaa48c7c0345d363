import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { limitConnectionsPerClient } from './connection-limit.ts';

/** A server answering 200 "ok", limited as the gateway is. */
async function limitedServer(perClient: number, trustedProxies: string[] = []) {
  const server = createServer((_req, res) => res.end('ok'));
  let refused = 0;
  limitConnectionsPerClient(server, { perClient, trustedProxies, onRefused: () => refused++ });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, refused: () => refused };
}

/** A connection that has sent half a request's headers and holds on (slowloris). */
async function holding(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write('GET / HTTP/1.1\r\nHost: x\r\n');
  return socket;
}

/** One whole request on a new connection: the raw answer. */
function ask(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () =>
      socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'),
    );
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}

async function close(server: Server, sockets: Socket[]) {
  for (const s of sockets) s.destroy();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

describe('open connections per client', () => {
  it('one past the limit is answered 429 in the error shape and closed; a freed slot serves again', async () => {
    const { server, port, refused } = await limitedServer(3);
    const held = await Promise.all([holding(port), holding(port), holding(port)]);
    const over = await ask(port);
    assert.match(over, /^HTTP\/1\.1 429 Too Many Requests\r\n/);
    assert.match(over, /\{"success":false,"error":"too many open connections from this client\."\}$/);
    assert.equal(refused(), 1);
    held.pop()!.destroy();
    await new Promise((r) => setTimeout(r, 50));
    assert.match(await ask(port), /^HTTP\/1\.1 200 OK[\s\S]*ok$/);
    await close(server, held);
  });

  it('does not limit the trusted proxies (their clients are behind them)', async () => {
    const { server, port, refused } = await limitedServer(2, ['loopback']);
    const held = await Promise.all([holding(port), holding(port), holding(port)]);
    assert.match(await ask(port), /^HTTP\/1\.1 200 OK/);
    assert.equal(refused(), 0);
    await close(server, held);
  });
});
