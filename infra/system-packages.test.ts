import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, beforeEach, describe, it } from 'node:test';
import { ensureSystemPackages, packagesFor, TEST_SYSTEM_PACKAGES } from './system-packages.ts';

/**
 * The test run's Debian packages, against a stand-in for apt-get: a script
 * that records each call and, for `install`, puts an executable named like
 * each package into the only PATH directory (so nothing on this machine, and
 * nothing of it, counts). Who runs it is given as a uid: no root needed.
 */
const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
/** The cases below install these three (wrk, the bench's, behaves the same). */
const PACKAGES = TEST_SYSTEM_PACKAGES.filter((p) => ['chromium', 'docker-compose', 'curl'].includes(p.name));

describe('ensureSystemPackages', () => {
  let dir: string;
  let bin: string;
  let calls: string;
  let logFile: string;
  let env: NodeJS.ProcessEnv;
  let progress: string[];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mailroom-system-packages-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  let n = 0;
  beforeEach(async () => {
    const case_ = join(dir, String(++n));
    bin = join(case_, 'bin');
    calls = join(case_, 'apt-get.calls');
    logFile = join(case_, 'apt-get.log');
    await mkdir(bin, { recursive: true });
    env = { PATH: bin };
    progress = [];
  });

  /** `failures` first calls fail with `message` and exit 100, as apt-get does. */
  const aptGet = async (failures = 0, message = 'E: Unable to locate package chromium') => {
    const script = [
      '#!/bin/sh',
      `echo "DEBIAN_FRONTEND=$DEBIAN_FRONTEND $*" >> '${calls}'`,
      `[ "$(/usr/bin/wc -l < '${calls}')" -gt ${failures} ] || { echo '${message}'; exit 100; }`,
      'installing=',
      'for a in "$@"; do',
      '  [ "$a" = install ] && installing=1 && continue',
      '  [ -n "$installing" ] || continue',
      '  case "$a" in -*|*[!a-z0-9.+-]*) ;; *)',
      `    printf '#!/bin/sh\\n' > '${bin}'/"$a"; /bin/chmod 755 '${bin}'/"$a" ;;`,
      '  esac',
      'done',
    ].join('\n');
    await writeFile(join(bin, 'apt-get'), `${script}\n`);
    await chmod(join(bin, 'apt-get'), 0o755);
  };
  const present = async (command: string) => {
    await writeFile(join(bin, command), '#!/bin/sh\n');
    await chmod(join(bin, command), 0o755);
  };
  const aptCalls = async () => (existsSync(calls) ? (await readFile(calls, 'utf8')).trim().split('\n') : []);
  const ensure = (uid: number) =>
    ensureSystemPackages(PACKAGES, { env, uid, logFile, log: (l) => progress.push(l) });

  it('installs what is missing, as root, once: update, then one install; a second run calls nothing', async () => {
    await aptGet();
    const found = await ensure(0);
    const lock = '-o DPkg::Lock::Timeout=300';
    assert.deepEqual(await aptCalls(), [
      `DEBIAN_FRONTEND=noninteractive ${lock} update`,
      `DEBIAN_FRONTEND=noninteractive ${lock} install -y --no-install-recommends chromium docker-compose curl`,
    ]);
    assert.deepEqual(found, {
      chromium: join(bin, 'chromium'),
      'docker-compose': join(bin, 'docker-compose'),
      curl: join(bin, 'curl'),
    });
    assert.match(progress[0]!, /^installing Debian's chromium, docker-compose, curl \(apt-get, as root\)$/);
    assert.match(progress.at(-1)!, /^chromium, docker-compose, curl ready \(\d+\.\ds\)$/);

    progress = [];
    assert.deepEqual(await ensure(0), found);
    assert.equal((await aptCalls()).length, 2, 'no apt-get call when all are there');
    assert.deepEqual(progress, []);
  });

  it('installs only the missing one', async () => {
    await aptGet();
    await present('chromium');
    await present('curl');
    await ensure(0);
    assert.match((await aptCalls()).at(-1)!, / install -y --no-install-recommends docker-compose$/);
  });

  it('never calls apt-get when everything is there, not even as root', async () => {
    await aptGet();
    for (const command of ['chromium', 'docker-compose', 'curl']) await present(command);
    await ensure(0);
    assert.deepEqual(await aptCalls(), []);
  });

  it('takes Chromium from CHROMIUM_PATH when it is set', async () => {
    await aptGet();
    await present('docker-compose');
    await present('curl');
    await present('my-chrome');
    env['CHROMIUM_PATH'] = join(bin, 'my-chrome');
    assert.equal((await ensure(0))['chromium'], join(bin, 'my-chrome'));
    assert.deepEqual(await aptCalls(), []);

    env['CHROMIUM_PATH'] = join(bin, 'nowhere');
    await assert.rejects(ensure(0), {
      message: `CHROMIUM_PATH=${join(bin, 'nowhere')} is not an executable (api/routes/dev/inbox.browser.test.ts runs it)`,
    });
    assert.deepEqual(await aptCalls(), []);
  });

  it('not root: one line naming what is missing and the command, apt-get not called', async () => {
    await aptGet();
    await present('curl');
    await assert.rejects(ensure(1000), {
      message:
        'missing chromium (for api/routes/dev/inbox.browser.test.ts) and docker-compose (for infra/compose.test.ts), ' +
        'which only root can install: sudo apt-get update && sudo apt-get install -y --no-install-recommends chromium docker-compose',
    });
    assert.deepEqual(await aptCalls(), []);
  });

  it('no apt-get (not Debian): one line naming the package and the Debian command', async () => {
    await present('chromium');
    await present('curl');
    await assert.rejects(ensure(0), {
      message:
        "missing docker-compose (for infra/compose.test.ts) and no apt-get here to install it: install docker-compose with this system's package manager " +
        '(on Debian: apt-get install -y --no-install-recommends docker-compose)',
    });
  });

  it('tries `apt-get update` again while another apt holds its lock', async () => {
    await aptGet(2, 'E: Could not get lock /var/lib/apt/lists/lock. It is held by process 4242 (apt-get)');
    await ensureSystemPackages(PACKAGES, {
      env,
      uid: 0,
      logFile,
      log: (l) => progress.push(l),
      lockRetryMs: 10,
    });
    const lock = '-o DPkg::Lock::Timeout=300';
    assert.deepEqual(await aptCalls(), [
      ...Array(3).fill(`DEBIAN_FRONTEND=noninteractive ${lock} update`),
      `DEBIAN_FRONTEND=noninteractive ${lock} install -y --no-install-recommends chromium docker-compose curl`,
    ]);
    assert.equal(progress.filter((l) => l.includes("another apt holds the package lists' lock")).length, 2);
  });

  it("apt-get's failure is reported at once with its output and log", async () => {
    await aptGet(1);
    const failure = await ensure(0).then(
      () => assert.fail('expected a failure'),
      (err: Error) => err.message,
    );
    assert.match(failure, /^updating the package lists failed \(exit 100\); full log: .*apt-get\.log\n/);
    assert.match(failure, /E: Unable to locate package chromium/);
    assert.equal((await aptCalls()).length, 1);
  });
});

describe('packagesFor', () => {
  const files = (...paths: string[]) => paths.map((p) => join(ROOT, p));

  it('a run of other test files needs none of them; the whole suite needs each', () => {
    assert.deepEqual(packagesFor(files('api/routes/health/health.test.ts'), ROOT), []);
    assert.deepEqual(
      packagesFor(files('infra/compose.test.ts', 'infra/services.test.ts'), ROOT).map((p) => p.name),
      ['docker-compose'],
    );
    const all = TEST_SYSTEM_PACKAGES.flatMap((p) => p.usedBy);
    assert.deepEqual(packagesFor(files(...all), ROOT), [...TEST_SYSTEM_PACKAGES]);
  });

  it('names test files that exist and run the package', () => {
    for (const pkg of TEST_SYSTEM_PACKAGES) {
      for (const file of pkg.usedBy) {
        const source = readFileSync(join(ROOT, file), 'utf8');
        assert.ok(source.includes(pkg.commands[0]!), `${file} runs ${pkg.name}`);
      }
    }
  });
});
