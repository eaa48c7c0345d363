import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import Koa from 'koa';
import { pino } from 'pino';
import { requestLog } from './request-log.ts';
import { createAccessSummary } from './access-summary.ts';

/** A Koa app with only the request log, its lines captured from a real pino logger. */
async function withApp(
  run: (url: string, lines: Array<Record<string, unknown>>, flush: () => void) => Promise<void>,
) {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  const app = new Koa();
  const logger = pino({ level: 'info' }, sink);
  const summary = createAccessSummary(logger, 3_600_000);
  app.use(requestLog(logger, summary));
  app.use((ctx) => {
    ctx.status = ctx.path === '/missing' ? 404 : ctx.path.endsWith('/broken') ? 503 : 200;
    ctx.body = 'ok';
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  try {
    await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, lines, () => summary.flush());
  } finally {
    summary.stop();
    server.close();
  }
}

describe('request log', () => {
  it('logs method, path and status, never the query string (view keys are secrets)', async () => {
    await withApp(async (url, lines) => {
      await fetch(`${url}/api/email/track`, { method: 'POST' });
      await fetch(`${url}/missing?view_key=SECRET_VIEW_KEY`, { method: 'POST' });
      assert.equal(lines.length, 2);
      assert.deepEqual(
        lines.map((l) => [l['method'], l['path'], l['status'], l['msg']]),
        [
          ['POST', '/api/email/track', 200, 'request'],
          ['POST', '/missing', 404, 'request'],
        ],
      );
      assert.ok(typeof lines[0]?.['ms'] === 'number');
      assert.ok(!JSON.stringify(lines).includes('SECRET_VIEW_KEY'));
    });
  });

  it('summarises the pixel and click routes per interval; their failures are logged one by one', async () => {
    await withApp(async (url, lines, flush) => {
      for (let i = 0; i < 3; i++) await fetch(`${url}/api/email/track?view_key=SECRET_VIEW_KEY`);
      await fetch(`${url}/api/email/click/TOKEN_A`);
      await fetch(`${url}/api/email/click/TOKEN_B/broken`);
      assert.deepEqual(
        lines.map((l) => [l['path'], l['status']]),
        [['/api/email/click/TOKEN_B/broken', 503]],
        'only the failure, at once',
      );
      flush();
      const summaries = lines.filter((l) => l['msg'] === 'requests summary');
      assert.deepEqual(
        summaries.map((l) => [l['route'], l['requests'], l['statuses']]),
        [
          ['GET /api/email/track', 3, { 200: 3 }],
          ['GET /api/email/click/:token', 1, { 200: 1 }],
        ],
      );
      assert.ok(!JSON.stringify(lines).includes('SECRET_VIEW_KEY'));
      assert.ok(!JSON.stringify(lines).includes('TOKEN_A'), 'click tokens are not logged either');
    });
  });

  it('echoes a sane X-Request-Id and replaces one that is not', async () => {
    await withApp(async (url, lines) => {
      const echoed = await fetch(url, { headers: { 'x-request-id': 'client-abc.123' } });
      assert.equal(echoed.headers.get('x-request-id'), 'client-abc.123');
      const replaced = await fetch(url, { headers: { 'x-request-id': 'bad id <script>' } });
      const generated = replaced.headers.get('x-request-id') ?? '';
      assert.match(generated, /^[0-9a-f-]{36}$/);
      assert.deepEqual(
        lines.map((l) => l['requestId']),
        ['client-abc.123', generated],
      );
    });
  });

  it('keeps health probes out of the info stream', async () => {
    await withApp(async (url, lines) => {
      await fetch(`${url}/ready`);
      await fetch(`${url}/health`);
      assert.equal(lines.length, 0);
    });
  });
});
