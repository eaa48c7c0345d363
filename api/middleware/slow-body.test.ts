import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { startGatewayProcess, type GatewayProcess } from '../../test/support/gateway-process.ts';
import { until } from '../../test/support/until.ts';
import { BODY_NOT_RECEIVED } from './body-stream.ts';
import { LINGER_MS } from './error-handler.ts';

/**
 * A body that never comes, or comes a byte at a time, from anyone (the
 * public tracking route needs no key): answered 408 in the error shape, the
 * socket closed, and the gateway process still serving afterwards.
 */

/** Opens a socket, writes `head`, and collects what comes back until the socket closes. */
function rawRequest(port: number, head: string) {
  const socket: Socket = connect(port, '127.0.0.1');
  let answer = '';
  const started = Date.now();
  socket.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
  socket.on('error', () => undefined);
  const closed = new Promise<{ answer: string; ms: number }>((resolve) =>
    socket.on('close', () => resolve({ answer, ms: Date.now() - started })),
  );
  socket.write(head);
  return { socket, closed, answered: () => answer };
}

const head = (contentLength: number) =>
  'POST /api/email/track HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
  `Content-Length: ${contentLength}\r\n\r\n`;

const statusOf = (answer: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]);
const bodyOf = (answer: string) => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as unknown;

describe('slow request bodies', () => {
  describe('at the request deadline', () => {
    let gateway: GatewayProcess;
    before(async () => {
      // The deadline (2 s) comes before the body's own time (60 s).
      gateway = await startGatewayProcess([], {
        env: { REQUEST_DEADLINE_SECONDS: '2', BODY_TIMEOUT_SECONDS: '60' },
      });
    });
    after(() => gateway.stop());

    it('a body still missing at the deadline is 408, the socket closed, and the gateway keeps answering', async () => {
      const port = Number(new URL(gateway.base).port);
      const request = rawRequest(port, `${head(10)}{`);
      const { answer, ms } = await request.closed;
      assert.equal(statusOf(answer), 408, answer);
      assert.deepEqual(bodyOf(answer), { success: false, error: BODY_NOT_RECEIVED });
      assert.ok(ms < 2000 + LINGER_MS + 5000, `closed after ${ms} ms`);
      // The process once died here, when the linger ended on a stream with no socket.
      await sleep(LINGER_MS + 500);
      assert.equal(gateway.exited(), undefined);
      assert.equal((await fetch(`${gateway.base}/health`)).status, 200);
    });
  });

  describe('BODY_TIMEOUT_SECONDS and the minimum rate', () => {
    let gateway: GatewayProcess;
    before(async () => {
      gateway = await startGatewayProcess([], {
        env: { REQUEST_DEADLINE_SECONDS: '60', BODY_TIMEOUT_SECONDS: '1' },
      });
    });
    after(() => gateway.stop());
    const port = () => Number(new URL(gateway.base).port);

    it('a body announced and never sent is 408 after BODY_TIMEOUT_SECONDS, not at the deadline', async () => {
      const { answer, ms } = await rawRequest(port(), head(10)).closed;
      assert.equal(statusOf(answer), 408, answer);
      assert.deepEqual(bodyOf(answer), { success: false, error: BODY_NOT_RECEIVED });
      assert.ok(ms >= 900 && ms < 1000 + LINGER_MS + 5000, `closed after ${ms} ms`);
    });

    it('a body dripped a byte every 100 ms is 408 once it falls behind 500 bytes a second', async () => {
      const request = rawRequest(port(), head(1000));
      const drip = setInterval(() => request.socket.write(' '), 100);
      try {
        const { answer, ms } = await request.closed;
        assert.equal(statusOf(answer), 408, answer);
        assert.ok(ms < 1000 + LINGER_MS + 5000, `closed after ${ms} ms`);
      } finally {
        clearInterval(drip);
      }
      assert.equal((await fetch(`${gateway.base}/health`)).status, 200);
    });

    it('a body that keeps up with 500 bytes a second is read past BODY_TIMEOUT_SECONDS', async () => {
      // 3 KB in 300-byte steps every 200 ms: 2 s in all, ahead of the rate all along.
      const body = JSON.stringify({ view_key: 'x'.repeat(2990) });
      const request = rawRequest(port(), head(Buffer.byteLength(body)));
      for (let at = 0; at < body.length; at += 300) {
        request.socket.write(body.slice(at, at + 300));
        await sleep(200);
      }
      await until('the answer', async () => request.answered().includes('\r\n\r\n'), 10_000, 50);
      request.socket.destroy();
      // Read whole and validated: the route's own answer, not a 408.
      assert.notEqual(statusOf(request.answered()), 408, request.answered());
      assert.ok(statusOf(request.answered()) >= 200, request.answered());
    });
  });
});
