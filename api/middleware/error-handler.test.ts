import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Koa from 'koa';
import { MongoClient } from 'mongodb';
import { createLogger } from '../../core/logger.ts';
import { freePort } from '../../infra/processes.ts';
import { serve } from '../../test/support/serve.ts';
import { useEmailApp } from '../../test/support/email-app.ts';
import { errorHandler } from './error-handler.ts';

/** What the router leaves unanswered, in the error shape, over HTTP. */
describe('unrouted requests', () => {
  const app = useEmailApp();

  it('an unknown path is 404 { success: false, error: "not found" }', async () => {
    for (const path of ['/nope', '/dev', '/dev/inbox', '/api/email', '/api/keys/x/y']) {
      const res = await app.get(path);
      assert.equal(res.status, 404, path);
      assert.deepEqual(res.body, { success: false, error: 'not found' });
    }
  });

  it('a method the path does not serve is 405 with Allow', async () => {
    const res = await app.request('PUT', '/api/email/send', {});
    assert.equal(res.status, 405);
    assert.ok(res.headers.get('allow')?.includes('POST'));
    assert.deepEqual(res.body, { success: false, error: 'method not allowed' });
  });
});

describe('a request that needs the database while it is down', () => {
  it('is a 500 that names the cause, not a bare "internal error"', async () => {
    const dead = new MongoClient(`mongodb://127.0.0.1:${await freePort()}`, {
      serverSelectionTimeoutMS: 200,
    });
    const app = new Koa();
    app.use(errorHandler(createLogger('test', { logLevel: 'silent', logPretty: false })));
    app.use(async (ctx) => {
      ctx.body = await dead.db('x').collection('emails').findOne({});
    });
    const server = await serve(app);
    try {
      const res = await fetch(`${server.url}/`);
      assert.equal(res.status, 500);
      assert.deepEqual(await res.json(), {
        success: false,
        error:
          'database unavailable: the request could not be completed. retry later; a send with an Idempotency-Key is safe to retry with the same key.',
      });
    } finally {
      await server.close();
      await dead.close();
    }
  });
});
