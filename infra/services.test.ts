import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTemporal } from './services.ts';
import { freePort } from './processes.ts';

/**
 * startTemporal's retry, against a stand-in for the `temporal` binary that
 * counts its starts and exits the way the dev server does: a clash on one of
 * the ports it picks for itself is retried (up to 3 attempts), anything else
 * is reported at once.
 */
describe('startTemporal', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mailroom-start-temporal-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const fakeBinary = async (name: string, message: string) => {
    const path = join(dir, name);
    const starts = join(dir, `${name}.starts`);
    await writeFile(path, `#!/bin/sh\necho start >> '${starts}'\necho '${message}'\nexit 1\n`);
    await chmod(path, 0o755);
    return { path, starts: async () => (await readFile(starts, 'utf8')).trim().split('\n').length };
  };

  it('starts again when one of its own ports was taken, and reports the third failure', async () => {
    const binary = await fakeBinary(
      'clash',
      'level=ERROR msg="Failed to start gRPC listener" error="listen tcp 127.0.0.1:1: bind: address already in use"',
    );
    const start = startTemporal({
      binary: binary.path,
      port: await freePort(),
      headless: true,
      logFile: join(dir, 'clash.log'),
    });
    await assert.rejects(start, /Temporal exited \(code 1/);
    assert.equal(await binary.starts(), 3);
  });

  it('reports any other failure at once', async () => {
    const binary = await fakeBinary('broken', 'Error: unknown flag --headless');
    const start = startTemporal({
      binary: binary.path,
      port: await freePort(),
      headless: true,
      logFile: join(dir, 'broken.log'),
    });
    await assert.rejects(start, /unknown flag/);
    assert.equal(await binary.starts(), 1);
  });
});
