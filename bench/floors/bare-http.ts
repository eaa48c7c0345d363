import { createServer, type OutgoingHttpHeaders } from 'node:http';
import { TRACKING_PIXEL } from '../../api/routes/email/track.ts';

/**
 * The floors of the cheapest paths: a bare Node `http` server answering
 * every request with the same bytes and headers as the gateway's answer,
 * nothing else. Listens on PORT (127.0.0.1); FLOOR says which answer:
 *
 *   pixel   200, the tracking GIF (GET /api/email/track)
 *   click   302 to CLICK_URL, Koa's redirect body (GET /api/email/click/{token});
 *           the token is not looked at (verifying its HMAC is a few µs of ours)
 *   health  200, `{"success":true,"status":"ok"}` (GET /health)
 */
const floor = process.env['FLOOR'];
const clickUrl = process.env['CLICK_URL'] ?? '';
const answers: Record<string, { status: number; headers: OutgoingHttpHeaders; body: Buffer }> = {
  pixel: {
    status: 200,
    headers: {
      'Cache-Control': 'no-store, no-cache, must-revalidate',
      Pragma: 'no-cache',
      'Content-Type': 'image/gif',
    },
    body: TRACKING_PIXEL,
  },
  click: {
    status: 302,
    headers: {
      'Cache-Control': 'no-store',
      Location: clickUrl,
      'Content-Type': 'text/html; charset=utf-8',
    },
    body: Buffer.from(`Redirecting to ${clickUrl}.`),
  },
  health: {
    status: 200,
    headers: { 'Content-Type': 'application/json; charset=utf-8' },
    body: Buffer.from(JSON.stringify({ success: true, status: 'ok' })),
  },
};
const answer = floor === undefined ? undefined : answers[floor];
if (!answer) throw new Error(`FLOOR must be one of ${Object.keys(answers).join(', ')}`);
if (floor === 'click' && !clickUrl) throw new Error('FLOOR=click needs CLICK_URL');
const headers = { ...answer.headers, 'Content-Length': answer.body.length };

const server = createServer((_req, res) => {
  res.writeHead(answer.status, headers);
  res.end(answer.body);
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env['PORT']), '127.0.0.1');
process.once('SIGTERM', () => process.exit(0));
