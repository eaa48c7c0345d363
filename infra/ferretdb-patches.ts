import { execFile } from 'node:child_process';
import { chmod, readFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** The files a unified diff changes: its `+++ b/<path>` lines. */
function patchedFiles(diff: string): string[] {
  return [...diff.matchAll(/^\+\+\+ b\/(\S+)$/gm)].flatMap((m) => (m[1] ? [m[1]] : []));
}

/**
 * Applies unified diffs (`--- a/…` / `+++ b/…`, paths from the module root) to
 * a copy of a Go module with `git apply`: each is checked first, and one that
 * does not apply cleanly (no fuzz) stops with one line naming it. So a version bump that moved the patched code fails
 * loudly instead of building upstream's code unpatched or a stale copy of it.
 */
export async function applyPatches(
  moduleDir: string,
  patches: readonly string[],
  what: string,
): Promise<void> {
  // Git must treat moduleDir as a plain directory, even inside someone's repository.
  const git = (args: string[]) =>
    execFileAsync('git', args, {
      cwd: moduleDir,
      env: { ...process.env, GIT_CEILING_DIRECTORIES: dirname(moduleDir) },
    });
  for (const patch of patches) {
    try {
      await git(['apply', '--check', patch]);
    } catch (err) {
      const reason = String((err as { stderr?: unknown }).stderr ?? err)
        .trim()
        .split('\n')
        .at(-1);
      throw new Error(
        `${relative(process.cwd(), patch)} does not apply to ${what} (${reason}): update it for this version`,
        {
          cause: err,
        },
      );
    }
    // Module copies keep the module cache's read-only modes; git writes a new file beside the old one.
    for (const file of patchedFiles(await readFile(patch, 'utf8'))) {
      await chmod(dirname(join(moduleDir, file)), 0o755);
      await chmod(join(moduleDir, file), 0o644);
    }
    await git(['apply', patch]);
  }
}
