import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP proxy in front of a real server that can stop forwarding: while
 * paused, bytes from either side are held unread, so a client sees a server
 * that accepted its request and never answers (a database stalled by a
 * failover, a full disk, a stopped process). Nothing is mocked on either side.
 */
export class PausableTcpProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private paused = false;
  address = '';

  constructor(private readonly target: { host: string; port: number }) {}

  async start(): Promise<this> {
    this.server = createServer((client) => {
      const upstream = connect(this.target.port, this.target.host);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => socket.destroy());
        if (this.paused) socket.pause();
      }
      client.pipe(upstream);
      upstream.pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.address = `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  pause(): void {
    this.paused = true;
    for (const socket of this.sockets) socket.pause();
  }

  resume(): void {
    this.paused = false;
    for (const socket of this.sockets) socket.resume();
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
