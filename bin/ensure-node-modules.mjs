/**
 * `npm run dev` and `npm test` run this first (their `pre` scripts): on a
 * fresh clone, or after package-lock.json changed, it installs the npm
 * dependencies with `npm ci`, so the README's two commands are all a
 * newcomer types. Plain Node with no dependency of its own: nothing is
 * installed yet when it runs.
 *
 * Installed means: every dependency named in package.json has its folder in
 * node_modules, and npm's record of the install (node_modules/.package-lock.json)
 * is not older than package-lock.json.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const names = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies });
const installRecord = join(root, 'node_modules', '.package-lock.json');

function installed() {
  if (!existsSync(installRecord)) return false;
  if (statSync(installRecord).mtimeMs < statSync(join(root, 'package-lock.json')).mtimeMs) return false;
  return names.every((name) => existsSync(join(root, 'node_modules', name, 'package.json')));
}

if (!installed()) {
  process.stdout.write('[setup] installing the npm dependencies (npm ci), once\n');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['ci', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    process.stderr.write('[setup] npm ci failed; see its output above\n');
    process.exit(result.status ?? 1);
  }
}
