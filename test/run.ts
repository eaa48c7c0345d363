import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { provision } from '../infra/provision.ts';
import { startScratchServers, type ServiceHandle } from '../infra/services.ts';
import { ensureSystemPackages, packagesFor } from '../infra/system-packages.ts';

/**
 * `npm test` (after `npm run check`): starts a real Temporal server and a real
 * MongoDB-protocol server on free ports with throwaway data, runs every
 * `*.test.ts` with Node's test runner against them, and always stops them.
 *
 *   tsx test/run.ts                       every test file
 *   tsx test/run.ts api/routes/health     only files under these paths (or these files)
 *
 * TEMPORAL_ADDRESS / MONGODB_URI, when set, are used instead of starting servers.
 * The Debian packages the chosen files run (chromium, docker-compose, curl) are
 * installed first when missing, or the run stops before any test saying how.
 */

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const TEST_DIRS = ['api', 'core', 'activities', 'workflows', 'worker', 'templates', 'test', 'infra', 'bench'];
const SKIP_DIRS = new Set(['node_modules', 'dist', '.data', '.git', 'coverage', 'preview']);

async function findTests(path: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(path, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOTDIR') return path.endsWith('.test.ts') ? [path] : [];
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const found: string[] = [];
  for (const entry of entries) {
    if (entry.isDirectory() && !SKIP_DIRS.has(entry.name))
      found.push(...(await findTests(join(path, entry.name))));
    else if (entry.isFile() && entry.name.endsWith('.test.ts')) found.push(join(path, entry.name));
  }
  return found;
}

const log = (line: string) => console.log(`[test] ${line}`);
const services: ServiceHandle[] = [];
let scratch: string | undefined;
let testProcess: ChildProcess | undefined;

// Ctrl-C: the test process (same process group) gets it too and finishes its report;
// before it runs, stop the servers here. services.ts kills any stragglers on exit.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (testProcess) testProcess.kill(signal);
    else void cleanup().finally(() => process.exit(130));
  });
}

async function cleanup(): Promise<void> {
  await Promise.allSettled(services.map((s) => s.stop()));
  if (scratch) await rm(scratch, { recursive: true, force: true });
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const roots = args.length ? args.map((a) => resolve(a)) : TEST_DIRS.map((d) => join(ROOT, d));
  const files = [...new Set((await Promise.all(roots.map(findTests))).flat())].sort();
  if (files.length === 0) {
    console.error(`[test] no *.test.ts files under ${args.length ? args.join(', ') : TEST_DIRS.join(', ')}`);
    return 1;
  }

  await ensureSystemPackages(packagesFor(files, ROOT), { log });

  const env: NodeJS.ProcessEnv = { ...process.env };
  // Tests assert on behaviour; info-level logs would bury the report.
  env['LOG_LEVEL'] ??= 'warn';
  const needs = { temporal: !env['TEMPORAL_ADDRESS'], mongo: !env['MONGODB_URI'] };
  if (needs.temporal || needs.mongo) {
    const started = Date.now();
    const binaries = await provision(needs, (line) => log(line));
    scratch = await mkdtemp(join(tmpdir(), 'mailroom-test-'));
    const { temporal, mongo } = await startScratchServers(binaries, scratch);
    if (temporal) {
      services.push(temporal);
      env['TEMPORAL_ADDRESS'] = temporal.address;
    }
    if (mongo) {
      services.push(mongo);
      env['MONGODB_URI'] = `${mongo.uri}/mailroom`;
    }
    log(`servers up in ${((Date.now() - started) / 1000).toFixed(1)}s (logs in ${scratch})`);
  }
  log(`Temporal ${env['TEMPORAL_ADDRESS']}, MongoDB ${env['MONGODB_URI']}`);
  log(`${files.length} test file(s): ${files.map((f) => relative(ROOT, f)).join(' ')}`);

  // Node 20's --test does not expand globs: the files are listed explicitly.
  const concurrency = env['TEST_CONCURRENCY'] ?? '2';
  // Piped (not inherited) so the summary can be repeated below; colours kept when we have a terminal.
  if (process.stdout.isTTY && !env['NO_COLOR']) env['FORCE_COLOR'] ??= '1';
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--test', '--test-reporter=spec', `--test-concurrency=${concurrency}`, ...files],
    { cwd: ROOT, env, stdio: ['inherit', 'pipe', 'inherit'] },
  );
  testProcess = child;
  let tail = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    process.stdout.write(chunk);
    tail = (tail + chunk.toString('utf8')).slice(-20_000);
  });
  const code = await new Promise<number>((done) => {
    child.once('close', (c, signal) => done(c ?? (signal ? 1 : 0)));
  });
  repeatSummary(tail);
  return code;
}

/**
 * Node prints its summary (ℹ tests / pass / fail …) and then, when something failed,
 * the failures again; repeat the summary so it is always the last thing on screen.
 */
function repeatSummary(output: string): void {
  // eslint-disable-next-line no-control-regex
  const lines = output.split('\n').map((l) => l.replace(/\x1b\[[0-9;]*m/g, ''));
  const summary = lines.filter((l) =>
    /^ℹ (tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) /.test(l),
  );
  const lastSummary = lines.findLastIndex((l) => l.startsWith('ℹ duration_ms '));
  const after = lines.slice(lastSummary + 1).filter((l) => l.trim()).length;
  if (summary.length && lastSummary >= 0 && after > 0) {
    console.log(`\n${summary.slice(-8).join('\n')}`);
  }
}

let exitCode = 1;
try {
  exitCode = await main();
} catch (err) {
  console.error(`[test] ${err instanceof Error ? err.message : String(err)}`);
} finally {
  // Quietly: Node's summary (ℹ tests / pass / fail) stays the last thing printed.
  await cleanup();
}
process.exit(exitCode);
