import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * Requests Node's HTTP parser refuses before any route sees them (headers
 * over Node's 16 KB, a malformed request line, a request that took longer
 * than the server's request timeout) are answered in the interface's error
 * shape, `{ success: false, error }`, instead of Node's bare status line
 * with an empty body; the connection is then closed, as Node does.
 */
export const HEADERS_TOO_LARGE = 'request headers too large.';
const ANSWERS: Record<string, { status: string; error: string }> = {
  HPE_HEADER_OVERFLOW: { status: '431 Request Header Fields Too Large', error: HEADERS_TOO_LARGE },
  ERR_HTTP_REQUEST_TIMEOUT: { status: '408 Request Timeout', error: 'request not received in time.' },
};
const MALFORMED = { status: '400 Bad Request', error: 'malformed HTTP request.' };

export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // A connection the client reset, or one already answered, has no one to tell.
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const { status, error } = ANSWERS[err.code ?? ''] ?? MALFORMED;
    const body = JSON.stringify({ success: false, error });
    socket.end(
      `HTTP/1.1 ${status}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
