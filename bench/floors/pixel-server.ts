import { createServer } from 'node:http';
import { TRACKING_PIXEL } from '../../api/routes/email/track.ts';

/**
 * The pixel's floor: a bare Node `http` server answering the same GIF bytes
 * with the same headers, nothing else. Listens on PORT (127.0.0.1).
 */
const server = createServer((_req, res) => {
  res.writeHead(200, {
    'Cache-Control': 'no-store, no-cache, must-revalidate',
    Pragma: 'no-cache',
    'Content-Type': 'image/gif',
    'Content-Length': TRACKING_PIXEL.length,
  });
  res.end(TRACKING_PIXEL);
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env['PORT']), '127.0.0.1');
process.once('SIGTERM', () => process.exit(0));
