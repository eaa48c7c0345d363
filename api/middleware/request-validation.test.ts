import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import Koa from 'koa';
import { Router } from '@koa/router';
import { Type } from '@sinclair/typebox';
import { describeRunIdProblem } from '../../core/workflows/workflow-messages.ts';
import { errorHandler } from './error-handler.ts';
import { defineRoute, mountRoutes, type RouteSpec } from '../route.ts';
import type { AppDeps, AppState } from '../types.ts';
import { createLogger } from '../../core/logger.ts';

/**
 * Params, query and headers as a route declares them: validated and coerced
 * before the handler, which gets them typed on `ctx.valid`; a problem is a
 * 400 in the route's words.
 */
describe('route params, query and headers', () => {
  const seen: unknown[] = [];
  const routes: RouteSpec[] = [
    defineRoute({
      method: 'get',
      path: '/things/:id',
      operationId: 'thing',
      summary: 't',
      tag: 'health',
      params: Type.Object({ id: Type.String({ maxLength: 5 }) }),
      query: Type.Object({
        runId: Type.String({ minLength: 1, maxLength: 255 }),
        limit: Type.Optional(Type.Integer({ minimum: 1, default: 10 })),
      }),
      headers: Type.Object({ 'x-thing': Type.Optional(Type.String({ minLength: 1, maxLength: 3 })) }),
      describeProblem: describeRunIdProblem,
      responses: {},
      handler(ctx) {
        const { id } = ctx.valid.params;
        const { runId, limit } = ctx.valid.query;
        seen.push({ id, runId, limit, thing: ctx.valid.headers['x-thing'] });
        ctx.body = { success: true };
      },
    }),
  ];
  let server: Server;
  let url = '';
  before(async () => {
    const app = new Koa<AppState>();
    app.silent = true;
    app.use(errorHandler(createLogger('test', { logLevel: 'silent', logPretty: false })));
    const router = new Router<AppState>();
    mountRoutes(router, routes, {
      config: { bodyReceiveMs: 20_000, bodyBytesInFlight: 128 * 1024 * 1024, trustedProxies: [] as string[] },
    } as AppDeps);
    app.use(router.routes());
    server = app.listen(0);
    await new Promise((resolve) => server.once('listening', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  const get = async (path: string, headers: Record<string, string> = {}) => {
    seen.length = 0;
    const res = await fetch(`${url}${path}`, { headers });
    return { status: res.status, body: (await res.json()) as unknown, seen: seen[0] };
  };

  it('gives the handler coerced values, defaults applied, the first of a repeated query field', async () => {
    assert.deepEqual((await get('/things/a?runId=r1&runId=r2&limit=7', { 'x-thing': 'abc' })).seen, {
      id: 'a',
      runId: 'r1',
      limit: 7,
      thing: 'abc',
    });
    assert.deepEqual((await get('/things/a?runId=r1')).seen, {
      id: 'a',
      runId: 'r1',
      limit: 10,
      thing: undefined,
    });
    // Sent but empty is not absent: checked as '' (here 400, minLength 1), the handler never runs.
    const empty = await get('/things/a?runId=r1', { 'x-thing': '' });
    assert.equal(empty.status, 400);
    assert.equal(empty.seen, undefined);
  });

  it('answers 400 in the route’s words, and the handler never runs', async () => {
    const refused = (error: string) => ({ status: 400, body: { success: false, error }, seen: undefined });
    assert.deepEqual(await get('/things/a'), refused('runId query parameter is required'));
    assert.deepEqual(await get('/things/a?runId='), refused('runId query parameter is required'));
    assert.deepEqual(
      await get(`/things/a?runId=${'r'.repeat(256)}`),
      refused('runId must be at most 255 characters'),
    );
    for (const bad of ['/things/a?runId=r&limit=ten', '/things/a?runId=r&limit=0', '/things/abcdef?runId=r'])
      assert.equal((await get(bad)).status, 400, bad);
    assert.equal((await get('/things/a?runId=r', { 'x-thing': 'long' })).status, 400);
  });
});
