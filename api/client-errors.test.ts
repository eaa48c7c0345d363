import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { answerClientErrors } from './client-errors.ts';

/** What the server writes back to `raw` before closing the connection. */
async function exchange(raw: string): Promise<string> {
  const server = createServer((_req, res) => res.end('ok'));
  answerClientErrors(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.write(raw);
    await new Promise<void>((resolve) => socket.on('close', () => resolve()));
    return Buffer.concat(chunks).toString('utf8');
  } finally {
    server.close();
  }
}

const bodyOf = (answer: string) => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as unknown;

describe('requests the HTTP parser refuses', () => {
  it('headers over Node’s limit: 431 in the error shape, not an empty body', async () => {
    const answer = await exchange(`GET /api/email/click/${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    assert.match(answer, /^HTTP\/1\.1 431 /);
    assert.match(answer, /Content-Type: application\/json/);
    assert.deepEqual(bodyOf(answer), { success: false, error: 'request headers too large.' });
  });

  it('a malformed request: 400 in the error shape', async () => {
    const answer = await exchange('NOT HTTP AT ALL\r\n\r\n');
    assert.match(answer, /^HTTP\/1\.1 400 /);
    assert.deepEqual(bodyOf(answer), { success: false, error: 'malformed HTTP request.' });
  });
});
