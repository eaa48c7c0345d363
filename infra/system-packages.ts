import { accessSync, constants } from 'node:fs';
import { delimiter, join, relative } from 'node:path';
import { setTimeout } from 'node:timers/promises';
import { cacheDir } from './provision.ts';
import { defaultLog, elapsed, findOnPath, runStep, type ProgressLog } from './steps.ts';

/**
 * The Debian packages some tests run as programs. Only `npm test` needs them
 * (`npm run dev` runs none of them, so it never asks for root): the test run
 * installs the missing ones with apt-get when it runs as root on a machine
 * that has apt-get, and otherwise stops before any test starts with one line
 * naming them and the command that installs them.
 */
export interface SystemPackage {
  /** Debian's package name. */
  name: string;
  /** It is there when one of these is an executable on PATH. */
  commands: readonly string[];
  /** A variable that names the executable instead; when set, only it counts. */
  variable?: string;
  /** The test files that run it (from the repository root): a run without them does not need it. */
  usedBy: readonly string[];
}

export const CHROMIUM: SystemPackage = {
  name: 'chromium',
  commands: ['chromium', 'chromium-browser', 'google-chrome'],
  variable: 'CHROMIUM_PATH',
  usedBy: ['api/routes/dev/inbox.browser.test.ts'],
};

/** The HTTP load generator of `npm run bench` (bench/lib/wrk.ts); its quick test runs it too. */
export const WRK: SystemPackage = { name: 'wrk', commands: ['wrk'], usedBy: ['bench/bench.test.ts'] };

export const TEST_SYSTEM_PACKAGES: readonly SystemPackage[] = [
  CHROMIUM,
  WRK,
  { name: 'docker-compose', commands: ['docker-compose'], usedBy: ['infra/compose.test.ts'] },
  { name: 'curl', commands: ['curl'], usedBy: ['test/readme.test.ts'] },
];

/** The packages the chosen test files run. */
export function packagesFor(files: readonly string[], root: string): SystemPackage[] {
  const chosen = new Set(files.map((f) => relative(root, f)));
  return TEST_SYSTEM_PACKAGES.filter((p) => p.usedBy.some((f) => chosen.has(f)));
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Where the package's program is: the variable's value when it is set, else the first command on PATH. */
export function locate(pkg: SystemPackage, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const configured = pkg.variable ? env[pkg.variable] : undefined;
  if (configured) return executable(configured) ? configured : undefined;
  const dirs = (env['PATH'] ?? '').split(delimiter).filter(Boolean);
  return dirs.flatMap((d) => pkg.commands.map((c) => join(d, c))).find(executable);
}

export interface SystemPackageOptions {
  /** PATH (where programs and apt-get are looked up) and the packages' variables. */
  env?: NodeJS.ProcessEnv;
  /** Whose process this is (this one's unless given): only root (0) may run apt-get install. */
  uid?: number;
  /** The package manager's command (looked up on env's PATH unless a path). */
  aptGet?: string;
  /** apt-get's output (<cache>/logs/apt-get.log unless given); its tail is shown on failure. */
  logFile?: string;
  log?: ProgressLog;
  /** Pause between tries of `apt-get update` while another apt holds its lock (5 s). */
  lockRetryMs?: number;
}

/** How long apt-get waits for another apt (a second test run, a fresh machine's unattended upgrade). */
const LOCK_WAIT_SECONDS = 300;

/**
 * Installs the missing packages (apt-get update, then one apt-get install of
 * all of them) and returns where each program is. Nothing is run when all are
 * there. Where it cannot install, it throws one line that says what to run.
 */
export async function ensureSystemPackages(
  packages: readonly SystemPackage[],
  options: SystemPackageOptions = {},
): Promise<Record<string, string>> {
  const env = options.env ?? process.env;
  const log = options.log ?? defaultLog;
  for (const pkg of packages) {
    const configured = pkg.variable ? env[pkg.variable] : undefined;
    if (configured && !executable(configured)) {
      throw new Error(
        `${pkg.variable}=${configured} is not an executable (${pkg.usedBy.join(', ')} runs it)`,
      );
    }
  }
  const missing = packages.filter((p) => !locate(p, env));
  if (missing.length > 0) {
    const names = missing.map((p) => p.name);
    const install = installArgs(names);
    const what = missing.map((p) => `${p.name} (for ${p.usedBy.join(', ')})`).join(' and ');
    const aptGet = options.aptGet?.includes('/')
      ? options.aptGet
      : await findOnPath(options.aptGet ?? 'apt-get', env['PATH'] ?? '');
    if (!aptGet) {
      throw new Error(
        `missing ${what} and no apt-get here to install it: install ${names.join(', ')} with this system's package manager (on Debian: apt-get ${install.join(' ')})`,
      );
    }
    if ((options.uid ?? process.getuid?.()) !== 0) {
      throw new Error(
        `missing ${what}, which only root can install: sudo apt-get update && sudo apt-get ${install.join(' ')}`,
      );
    }
    const started = Date.now();
    log(`installing Debian's ${names.join(', ')} (apt-get, as root)`);
    await aptGetInstall(aptGet, names, {
      env: { ...env, DEBIAN_FRONTEND: 'noninteractive' },
      logFile: options.logFile ?? join(cacheDir(env), 'logs', 'apt-get.log'),
      log,
      retryMs: options.lockRetryMs ?? 5000,
    });
    const absent = missing
      .filter((p) => !locate(p, env))
      .map((p) => `${p.name} (${p.commands.join(' or ')})`);
    if (absent.length > 0) {
      throw new Error(`apt-get installed ${names.join(', ')} but PATH has no ${absent.join(', ')}`);
    }
    log(`${names.join(', ')} ready (${elapsed(started)})`);
  }
  return Object.fromEntries(packages.map((p) => [p.name, locate(p, env)!]));
}

/** Recommended packages left out: docker-compose's is a whole container engine (docs/configuration.md). */
const installArgs = (names: string[]) => ['install', '-y', '--no-install-recommends', ...names];

/** `apt-get update` (a fresh machine has no package lists), then the one install. */
async function aptGetInstall(
  aptGet: string,
  names: string[],
  step: { env: NodeJS.ProcessEnv; logFile: string; log: ProgressLog; retryMs: number },
): Promise<void> {
  // install waits for dpkg's lock by itself; update does not wait for the lists' lock, so it is tried again.
  const lock = ['-o', `DPkg::Lock::Timeout=${LOCK_WAIT_SECONDS}`];
  for (let waited = 0; ; waited += step.retryMs) {
    try {
      await runStep('updating the package lists', aptGet, [...lock, 'update'], step);
      break;
    } catch (err) {
      const locked = /Could not get lock/.test((err as Error).message);
      if (!locked || waited >= LOCK_WAIT_SECONDS * 1000) throw err;
      step.log(`  … another apt holds the package lists' lock; trying again in ${step.retryMs / 1000}s`);
      await setTimeout(step.retryMs);
    }
  }
  await runStep(`installing ${names.join(', ')}`, aptGet, [...lock, ...installArgs(names)], step);
}
