import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import { answerClientErrors } from '../../api/client-errors.ts';

/**
 * Listens on an ephemeral loopback port, answering what Node's parser refuses
 * (431, 400, 408) in the error shape as the gateway's server does; `close`
 * also ends keep-alive sockets.
 */
export async function serve(app: Koa<never> | Koa): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  answerClientErrors(server);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
