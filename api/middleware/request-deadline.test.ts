import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mongoUri } from '../../test/support/env.ts';
import { startGatewayProcess, type GatewayProcess } from '../../test/support/gateway-process.ts';
import { PausableTcpProxy } from '../../test/support/pausable-tcp-proxy.ts';
import { REQUEST_DEADLINE_PASSED } from './request-deadline.ts';

const DEADLINE_SECONDS = 2;

/**
 * The gateway process reaching the real database through a TCP proxy that
 * stops forwarding: a request whose database call never returns is answered
 * 503 in the error shape at its deadline (REQUEST_DEADLINE_SECONDS), never
 * left hanging; once the database answers again, so does the gateway.
 */
describe('request deadline: a database that stops answering', () => {
  let proxy: PausableTcpProxy;
  let gateway: GatewayProcess;
  before(async () => {
    const db = new URL(mongoUri());
    proxy = await new PausableTcpProxy({ host: db.hostname, port: Number(db.port || 27017) }).start();
    gateway = await startGatewayProcess([], {
      mongoHost: proxy.address,
      env: { REQUEST_DEADLINE_SECONDS: String(DEADLINE_SECONDS) },
    });
  });
  after(async () => {
    proxy.resume();
    await gateway.stop();
    await proxy.stop();
  });

  // An email status read: a database read behind the key check (404 for an id that was never sent).
  const status = () =>
    fetch(`${gateway.base}/api/email/status/${randomUUID()}`, {
      headers: {
        authorization: `Bearer ${gateway.key}`,
        'x-company-id': gateway.company,
        'x-organization-id': gateway.organization,
        'x-user-id': gateway.company,
      },
      signal: AbortSignal.timeout(60_000),
    });

  it('answers 503 within the deadline, then normally once the database is back', async () => {
    assert.equal((await status()).status, 404);

    proxy.pause();
    const started = Date.now();
    const stalled = await status();
    const waitedMs = Date.now() - started;
    assert.equal(stalled.status, 503);
    assert.deepEqual(await stalled.json(), { success: false, error: REQUEST_DEADLINE_PASSED });
    assert.ok(Number(stalled.headers.get('retry-after')) > 0);
    assert.ok(
      waitedMs >= DEADLINE_SECONDS * 1000 - 100 && waitedMs < DEADLINE_SECONDS * 1000 + 10_000,
      `answered after ${waitedMs} ms`,
    );
    assert.equal(gateway.exited(), undefined);

    proxy.resume();
    assert.equal((await status()).status, 404);
  });
});
