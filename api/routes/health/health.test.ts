import { after, before, describe, it } from 'node:test';
import { gatewayTemporalConnection } from '../../temporal-deadlines.ts';
import assert from 'node:assert/strict';
import Koa from 'koa';
import { Router } from '@koa/router';
import { MongoClient } from 'mongodb';
import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../../../core/config.ts';
import { connectDatabase, type Database } from '../../../core/db.ts';
import { createLogger } from '../../../core/logger.ts';
import { freePort } from '../../../infra/processes.ts';
import {
  mongoUri,
  temporalAddress,
  temporalNamespace,
  TEST_SECRET,
  uniqueName,
} from '../../../test/support/env.ts';
import { serve as listen } from '../../../test/support/serve.ts';
import { mountRoutes } from '../../route.ts';
import type { AppDeps, AppState } from '../../types.ts';
import { healthRoutes, READY_CHECK_TIMEOUT_MS } from './health.ts';

/** Serves only the health routes, against whatever db and Temporal client the test gives. */
async function serve(
  deps: Pick<AppDeps, 'db' | 'temporal' | 'config' | 'lifecycle'>,
): Promise<{ url: string; close(): Promise<void> }> {
  const app = new Koa<AppState>();
  const router = new Router<AppState>();
  // The health routes use only these dependencies (and a logger for failed checks).
  const logger = createLogger('test', { logLevel: 'silent', logPretty: false });
  mountRoutes(router, healthRoutes, { ...deps, logger } as AppDeps);
  app.use(router.routes()).use(router.allowedMethods());
  return listen(app);
}

async function get(url: string): Promise<{ status: number; body: Record<string, unknown>; ms: number }> {
  const started = Date.now();
  const res = await fetch(url);
  return {
    status: res.status,
    body: (await res.json()) as Record<string, unknown>,
    ms: Date.now() - started,
  };
}

describe('health routes', () => {
  let database: Database;
  let connection: Connection;
  const config = loadConfig({
    TEMPORAL_ADDRESS: temporalAddress(),
    TEMPORAL_NAMESPACE: temporalNamespace(),
    MAILROOM_SECRET: TEST_SECRET,
  });

  before(async () => {
    database = await connectDatabase(mongoUri(), uniqueName('health'));
    connection = gatewayTemporalConnection(temporalAddress());
  });

  after(async () => {
    await database.db.dropDatabase();
    await database.close();
    await connection.close();
  });

  it('GET /health answers ok without touching any dependency', async () => {
    // Dependencies that would fail if used: liveness must not depend on them.
    const deadMongo = new MongoClient(`mongodb://127.0.0.1:${await freePort()}`, {
      serverSelectionTimeoutMS: 200,
    });
    const deadTemporal = new Client({
      connection: Connection.lazy({ address: `127.0.0.1:${await freePort()}` }),
    });
    const app = await serve({ db: deadMongo.db('x'), temporal: deadTemporal, config });
    try {
      const res = await get(`${app.url}/health`);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { success: true, status: 'ok' });
    } finally {
      await app.close();
      await deadMongo.close();
      await deadTemporal.connection.close();
    }
  });

  it('GET /ready is 503 `shutting down` while the gateway drains, whatever its dependencies say', async () => {
    const lifecycle = { draining: false };
    const app = await serve({
      db: database.db,
      temporal: new Client({ connection, namespace: config.temporal.namespace }),
      config,
      lifecycle,
    });
    try {
      assert.equal((await get(`${app.url}/ready`)).status, 200);
      lifecycle.draining = true;
      const res = await get(`${app.url}/ready`);
      assert.equal(res.status, 503);
      assert.deepEqual(res.body, {
        success: false,
        error: 'shutting down',
        mongodb: { ok: true },
        temporal: { ok: true },
      });
    } finally {
      await app.close();
    }
  });

  it('GET /ready is 200 when MongoDB and Temporal both answer', async () => {
    const app = await serve({
      db: database.db,
      temporal: new Client({ connection, namespace: config.temporal.namespace }),
      config,
    });
    try {
      const res = await get(`${app.url}/ready`);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { success: true, mongodb: { ok: true }, temporal: { ok: true } });
    } finally {
      await app.close();
    }
  });

  it('GET /ready is 503 naming Temporal when Temporal does not answer, within the check timeout', async () => {
    const closedPort = await freePort();
    // The gateway's own client (lazy, deadlines, default retries), pointed at a port nobody listens on.
    // It is not closed: closing a gRPC channel while the SDK's retry timer is pending raises an
    // uncaught "Channel has been shut down"; the channel holds no socket and ends with the process.
    const deadTemporal = new Client({ connection: gatewayTemporalConnection(`127.0.0.1:${closedPort}`) });
    const app = await serve({ db: database.db, temporal: deadTemporal, config });
    try {
      const res = await get(`${app.url}/ready`);
      assert.equal(res.status, 503);
      assert.equal(res.body['success'], false);
      assert.equal(res.body['error'], 'not ready');
      assert.deepEqual(res.body['mongodb'], { ok: true });
      const temporal = res.body['temporal'] as { ok: boolean; error?: string };
      assert.equal(temporal.ok, false);
      // Which dependency and why, in plain words; no driver internals (addresses, stack).
      assert.ok(
        ['unreachable', `no answer within ${READY_CHECK_TIMEOUT_MS}ms`].includes(temporal.error ?? ''),
      );
      assert.doesNotMatch(JSON.stringify(res.body), /127\.0\.0\.1|Error:/);
      assert.ok(res.ms < READY_CHECK_TIMEOUT_MS + 1500, `answered in ${res.ms}ms`);
    } finally {
      await app.close();
    }
  });

  it('GET /ready is 503 naming MongoDB when the database does not answer', async () => {
    const deadMongo = new MongoClient(`mongodb://127.0.0.1:${await freePort()}`, {
      serverSelectionTimeoutMS: 5000,
    });
    const app = await serve({ db: deadMongo.db('x'), temporal: new Client({ connection }), config });
    try {
      const res = await get(`${app.url}/ready`);
      assert.equal(res.status, 503);
      assert.equal(res.body['error'], 'not ready');
      assert.deepEqual(res.body['temporal'], { ok: true });
      const mongodb = res.body['mongodb'] as { ok: boolean; error?: string };
      assert.equal(mongodb.ok, false);
      assert.ok(
        ['unreachable', `no answer within ${READY_CHECK_TIMEOUT_MS}ms`].includes(mongodb.error ?? ''),
      );
      assert.doesNotMatch(JSON.stringify(res.body), /127\.0\.0\.1|Error:/);
      assert.ok(res.ms < READY_CHECK_TIMEOUT_MS + 1500, `answered in ${res.ms}ms`);
    } finally {
      await app.close();
      await deadMongo.close();
    }
  });

  it('GET /ready is 503 when the configured namespace does not exist', async () => {
    const missing = loadConfig({
      TEMPORAL_NAMESPACE: uniqueName('no_such_namespace'),
      MAILROOM_SECRET: TEST_SECRET,
    });
    const app = await serve({ db: database.db, temporal: new Client({ connection }), config: missing });
    try {
      const res = await get(`${app.url}/ready`);
      assert.equal(res.status, 503);
      const temporal = res.body['temporal'] as { ok: boolean; error?: string };
      assert.equal(temporal.ok, false);
      assert.equal(temporal.error, `namespace '${missing.temporal.namespace}' not found`);
    } finally {
      await app.close();
    }
  });
});
