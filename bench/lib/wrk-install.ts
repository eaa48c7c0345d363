import { spawn } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import { delimiter, join } from 'node:path';

/**
 * Finds `wrk` (the HTTP load generator, bench/lib/wrk.ts) on the PATH, or
 * installs Debian's package when it is missing and this process may:
 * running as root on a system with apt-get. Answers the binary's path, or
 * why there is none (one sentence, for the bench's output).
 *
 * apt-get waits up to five minutes for the package lock instead of failing
 * at once: other provisioning (tests installing their own packages) may
 * hold it.
 */
export async function ensureWrk(log: (line: string) => void): Promise<{ path?: string; why?: string }> {
  const found = await onPath('wrk');
  if (found) return { path: found };
  const apt = await onPath('apt-get');
  if (!apt || process.getuid?.() !== 0)
    return {
      why: `wrk is not installed and this process cannot install it (${apt ? 'not root' : 'no apt-get'}); install it (Debian/Ubuntu: apt-get install wrk; macOS: brew install wrk)`,
    };
  const lock = ['-o', 'DPkg::Lock::Timeout=300'];
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  log('wrk is missing: apt-get update …');
  const update = await run(apt, ['-qq', ...lock, 'update'], env);
  if (update.code !== 0) return { why: `apt-get update failed (${update.code}): ${update.tail}` };
  log('apt-get install wrk …');
  const install = await run(apt, ['install', '-y', '-qq', '--no-install-recommends', ...lock, 'wrk'], env);
  if (install.code !== 0) return { why: `apt-get install wrk failed (${install.code}): ${install.tail}` };
  const path = await onPath('wrk');
  if (!path) return { why: 'apt-get installed wrk, but it is not on the PATH' };
  log(`wrk installed: ${path}`);
  return { path };
}

async function onPath(name: string): Promise<string | undefined> {
  for (const dir of (process.env['PATH'] ?? '').split(delimiter).filter(Boolean)) {
    const candidate = join(dir, name);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Runs a command to its end; its output is kept only to quote the end of it on failure. */
function run(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; tail: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-2000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.once('error', (err) => resolve({ code: -1, tail: err.message }));
    child.once('close', (code) => resolve({ code, tail: output.trim().split('\n').slice(-3).join(' | ') }));
  });
}
