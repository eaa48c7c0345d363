import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isMailroomError } from '../../errors.ts';
import { createAttachmentFetcher, resolveAttachments } from './attachments.ts';

/**
 * The SSRF defences against real sockets. Only loopback traffic is ever sent:
 * a canary on 127.0.0.1 must never be reached; a "public" file server on
 * 127.0.0.2 is let through by the test-only allowance (allowAddresses). The
 * private and link-local refusals are decided on the literal address before
 * any connection is attempted.
 */

async function listen(
  host: string,
  handler: Parameters<typeof createServer>[1],
): Promise<{ server: Server; base: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, base: `http://${host}:${(server.address() as AddressInfo).port}` };
}

async function rejection(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    assert.ok(isMailroomError(err), `expected MailroomError, got ${String(err)}`);
    assert.equal(err.kind, 'validation');
    return err.message;
  }
  assert.fail('expected a rejection');
}

describe('attachment fetcher (SSRF-safe)', () => {
  let canary: { server: Server; base: string };
  let files: { server: Server; base: string };
  let canaryHits = 0;
  const fetcher = createAttachmentFetcher({ timeoutMs: 500, allowAddresses: ['127.0.0.2'] });
  const maxBytes = 10 * 1024 * 1024;

  before(async () => {
    canary = await listen('127.0.0.1', (_req, res) => {
      canaryHits++;
      res.end('secret');
    });
    files = await listen('127.0.0.2', (req, res) => {
      const url = req.url ?? '/';
      if (url === '/report.pdf') {
        res.writeHead(200, { 'content-type': 'application/pdf; charset=binary' });
        res.end('%PDF-1.4 report');
      } else if (url === '/to-canary') {
        res.writeHead(302, { location: `${canary.base}/internal` });
        res.end();
      } else if (url === '/to-localhost') {
        res.writeHead(301, { location: `http://localhost:${new URL(canary.base).port}/internal` });
        res.end();
      } else if (url === '/bad-location') {
        res.writeHead(302, { location: 'http://[::1' });
        res.end();
      } else if (url === '/elsewhere') {
        res.writeHead(302, { location: 'http://127.0.0.2:1/report.pdf' });
        res.end();
      } else if (url === '/%0d%0aX-Injected:%20yes') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('hello');
      } else if (url.startsWith('/hop/')) {
        const n = Number(url.slice(5));
        res.writeHead(302, { location: n > 0 ? `/hop/${n - 1}` : '/report.pdf' });
        res.end();
      } else if (url === '/big-declared') {
        res.writeHead(200, { 'content-length': String(maxBytes + 1) });
        res.end();
      } else if (url === '/big-streamed') {
        // No content-length: the cap must apply while streaming.
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        const chunk = Buffer.alloc(1024 * 1024);
        let sent = 0;
        const push = () => {
          if (sent++ > 12 || res.destroyed) return res.end();
          res.write(chunk, () => setImmediate(push));
        };
        push();
      } else if (url === '/slow') {
        // Never answers: the timeout must end the fetch.
      } else {
        res.writeHead(404);
        res.end();
      }
    });
  });

  after(async () => {
    for (const { server } of [canary, files]) {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('fetches an allowed URL with its content type and file name', async () => {
    const file = await fetcher(`${files.base}/report.pdf`, { maxBytes });
    assert.equal(file.body.toString(), '%PDF-1.4 report');
    assert.equal(file.contentType, 'application/pdf');
    assert.equal(file.filename, 'report.pdf');
  });

  it('follows up to 3 redirects, not 4', async () => {
    assert.equal((await fetcher(`${files.base}/hop/2`, { maxBytes })).body.toString(), '%PDF-1.4 report');
    assert.equal(
      await rejection(fetcher(`${files.base}/hop/3`, { maxBytes })),
      'attachment could not be fetched: too many redirects',
    );
  });

  it('refuses loopback, localhost, private, link-local/metadata, IPv6 loopback and IPv4-compatible before connecting', async () => {
    const port = new URL(canary.base).port;
    for (const url of [
      `${canary.base}/x`,
      `http://localhost:${port}/x`,
      `http://[::1]:${port}/x`,
      `http://[::127.0.0.1]:${port}/x`,
      `http://[::7f00:1]:${port}/x`,
      'http://10.0.0.1/x',
      'http://192.168.1.1/x',
      'http://169.254.169.254/latest/meta-data/',
      'http://0.0.0.0/x',
      'http://100.64.0.1/x',
    ]) {
      assert.equal(
        await rejection(fetcher(url, { maxBytes })),
        'attachment could not be fetched: address not allowed',
        url,
      );
    }
    assert.equal(canaryHits, 0);
  });

  it('follows redirects only within the same origin: loopback, localhost or elsewhere are refused', async () => {
    for (const path of ['/to-canary', '/to-localhost', '/elsewhere']) {
      assert.equal(
        await rejection(fetcher(`${files.base}${path}`, { maxBytes })),
        'attachment could not be fetched: redirects to another origin are not allowed',
      );
    }
    assert.equal(canaryHits, 0);
  });

  it('answers an invalid redirect Location with a clear refusal (400), not a crash', async () => {
    assert.equal(
      await rejection(fetcher(`${files.base}/bad-location`, { maxBytes })),
      'attachment could not be fetched: invalid redirect location',
    );
  });

  it('takes no filename with CR/LF from the URL (it would become a MIME header)', async () => {
    const file = await fetcher(`${files.base}/%0d%0aX-Injected:%20yes`, { maxBytes });
    assert.equal(file.body.toString(), 'hello');
    assert.equal(file.filename, undefined);
  });

  it('refuses non-http(s) schemes and malformed URLs', async () => {
    assert.equal(
      await rejection(fetcher('file:///etc/passwd', { maxBytes })),
      'attachment could not be fetched: only http and https URLs are allowed',
    );
    assert.equal(
      await rejection(fetcher('ftp://example.com/a', { maxBytes })),
      'attachment could not be fetched: only http and https URLs are allowed',
    );
    assert.equal(
      await rejection(fetcher('not a url', { maxBytes })),
      'attachment could not be fetched: invalid URL',
    );
  });

  it('enforces the size cap from the header and while streaming', async () => {
    assert.equal(
      await rejection(fetcher(`${files.base}/big-declared`, { maxBytes })),
      'attachment exceeds maximum size limit.',
    );
    assert.equal(
      await rejection(fetcher(`${files.base}/big-streamed`, { maxBytes })),
      'attachment exceeds maximum size limit.',
    );
  });

  it('times out', async () => {
    const started = Date.now();
    assert.equal(
      await rejection(fetcher(`${files.base}/slow`, { maxBytes })),
      'attachment could not be fetched: timed out',
    );
    assert.ok(Date.now() - started < 3000);
  });

  it('reports HTTP errors', async () => {
    assert.equal(
      await rejection(fetcher(`${files.base}/missing`, { maxBytes })),
      'attachment could not be fetched: HTTP 404',
    );
  });

  it('resolveAttachments: caller filename/type win, response fills the gaps', async () => {
    const out = await resolveAttachments(
      [
        { path: `${files.base}/report.pdf` },
        { path: `${files.base}/report.pdf`, filename: 'mine.pdf', contentType: 'application/x-mine' },
        { filename: 'inline.txt', content: Buffer.from('hi').toString('base64'), contentType: 'text/plain' },
      ],
      fetcher,
    );
    assert.deepEqual(out, [
      {
        filename: 'report.pdf',
        content: Buffer.from('%PDF-1.4 report').toString('base64'),
        type: 'application/pdf',
      },
      {
        filename: 'mine.pdf',
        content: Buffer.from('%PDF-1.4 report').toString('base64'),
        type: 'application/x-mine',
      },
      { filename: 'inline.txt', content: 'aGk=', type: 'text/plain' },
    ]);
  });
});
