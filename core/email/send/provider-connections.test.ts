import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createProviderAgents } from './provider-connections.ts';

describe("the provider's kept-alive connections", () => {
  it("close on our side before the server's announced keep-alive timeout, never as a request reuses them", async () => {
    const server = createServer((_req, res) => res.end('ok'));
    server.keepAliveTimeout = 2_000; // announced as `Keep-Alive: timeout=2`
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { httpAgent } = createProviderAgents(5_000);
    try {
      const { port } = server.address() as AddressInfo;
      const hint = await new Promise<string | undefined>((resolve) =>
        get({ port, host: '127.0.0.1', agent: httpAgent }, (res) => {
          res.resume();
          res.on('end', () => resolve(String(res.headers['keep-alive'])));
        }),
      );
      assert.equal(hint, 'timeout=2');
      const idle = () => Object.values(httpAgent.freeSockets).flat().length;
      assert.equal(idle(), 1, 'kept alive after the answer');
      // Node closes it a second before the server's 2 s: gone at 1.5 s, while the server still holds it.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      assert.equal(idle(), 0);
    } finally {
      httpAgent.destroy();
      server.close();
    }
  });
});
