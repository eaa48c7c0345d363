import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { ACCEPT_QUIET_MS, gracefulDrain } from './graceful-drain.ts';

/** A server answering `ok` after `?ms=` milliseconds (never, for `?ms=never`). */
async function slowServer(): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    const ms = new URL(req.url ?? '/', 'http://x').searchParams.get('ms') ?? '0';
    if (ms === 'never') return;
    setTimeout(() => res.end('ok'), Number(ms));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

/** A raw connection, open once connected. */
function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Writes one GET on `socket`; resolves with what came back before the connection closed. */
function ask(socket: Socket, path: string): Promise<string> {
  return new Promise((resolve) => {
    let answer = '';
    socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    socket.once('close', () => resolve(answer));
    socket.once('error', () => undefined);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
  });
}

describe('graceful drain (SIGTERM)', () => {
  it("answers a request whose connection was still in the kernel's queue when the shutdown began", async () => {
    const { server, port } = await slowServer();
    const drain = gracefulDrain(server);
    // Another process connects and writes its request while this one's event loop is busy:
    // the connection waits in the listening socket's queue, the state a burst leaves.
    // Quiet for longer than ACCEPT_QUIET_MS first: the queue, not a recent connection, must keep it listening.
    await new Promise((r) => setTimeout(r, ACCEPT_QUIET_MS + 100));
    const written = join(mkdtempSync(join(tmpdir(), 'drain-')), 'written');
    const client = spawn(process.execPath, [
      '-e',
      `const s = require('net').connect(${port}, '127.0.0.1', () => {
         s.write('GET /?ms=0 HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n', () => require('fs').writeFileSync(${JSON.stringify(written)}, ''));
       });
       let a = ''; s.on('data', (d) => (a += d)); s.on('error', (e) => console.log('error ' + e.code));
       s.on('close', () => console.log(JSON.stringify(a)));`,
    ]);
    let out = '';
    client.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise((r) => client.once('exit', r));
    // Held until the client has written (its own loop marks it in a file), then the shutdown
    // starts in the same turn: Node's server.close() would close the listening socket with the
    // connection still queued, unaccepted, and the client would see a reset.
    const until = Date.now() + 5_000;
    while (!existsSync(written) && Date.now() < until) {
      /* the event loop is held, as under a burst */
    }
    assert.ok(existsSync(written), 'the client wrote its request');
    const drained = drain.drain(5_000);
    await exited;
    assert.match(out, /HTTP\/1\.1 200 OK/, out);
    assert.match(out, /Connection: close/i, out);
    assert.deepEqual(await drained, { cut: 0 });
    assert.equal(server.listening, false);
  });

  it('answers the next request of a keep-alive connection written just as the shutdown began', async () => {
    const { server, port } = await slowServer();
    const drain = gracefulDrain(server);
    const socket = await open(port);
    const first = await new Promise<string>((resolve) => {
      socket.once('data', (d: Buffer) => resolve(d.toString('latin1')));
      socket.write('GET /?ms=0 HTTP/1.1\r\nHost: x\r\n\r\n');
    });
    assert.match(first, /keep-alive/i);
    // Idle between two requests, the state Node's server.close() destroys at once.
    const drained = drain.drain(5_000);
    const answer = await ask(socket, '/?ms=0');
    assert.match(answer, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(answer, /\r\nConnection: close\r\n/i);
    assert.deepEqual(await drained, { cut: 0 });
  });

  it('finishes an answer in flight with Connection: close, and refuses connections once it stopped listening', async () => {
    const { server, port } = await slowServer();
    const drain = gracefulDrain(server);
    const socket = await open(port);
    const answered = ask(socket, '/?ms=600');
    await new Promise((r) => setTimeout(r, 50));
    const drained = drain.drain(5_000);
    await new Promise((r) => setTimeout(r, ACCEPT_QUIET_MS + 200));
    await assert.rejects(open(port), /ECONNREFUSED/);
    const answer = await answered;
    assert.match(answer, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(answer, /\r\nConnection: close\r\n/i);
    assert.deepEqual(await drained, { cut: 0 });
  });

  it('cuts what outlives the grace, and says how many', async () => {
    const { server, port } = await slowServer();
    const drain = gracefulDrain(server);
    const socket = await open(port);
    const answered = ask(socket, '/?ms=never');
    await new Promise((r) => setTimeout(r, 50));
    const started = Date.now();
    assert.deepEqual(await drain.drain(1_000), { cut: 1 });
    assert.ok(Date.now() - started < 3_000);
    assert.equal(await answered, '');
  });
});
