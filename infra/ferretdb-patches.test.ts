import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyPatches } from './ferretdb-patches.ts';

/**
 * FerretDB's patches are applied to a copy of the module only when they apply
 * exactly; a new FerretDB version that moved the patched lines must stop the
 * build with one line, not build upstream's code unpatched.
 */
const work = await mkdtemp(join(tmpdir(), 'ferretdb-patches-'));
after(() => rm(work, { recursive: true, force: true }));

const ORIGINAL = 'package metadata\n\nconst IDColumn = "a"\n\nconst Other = 1\n';
const PATCH = `A patch with a description before the diff.

--- a/internal/metadata/metadata.go
+++ b/internal/metadata/metadata.go
@@ -1,5 +1,5 @@
 package metadata
 
-const IDColumn = "a"
+const IDColumn = "b"
 
 const Other = 1
`;

/** A read-only module copy holding `content`, as `cp` makes it from Go's module cache. */
async function moduleCopy(name: string, content: string): Promise<string> {
  const dir = join(work, name);
  await mkdir(join(dir, 'internal', 'metadata'), { recursive: true });
  await writeFile(join(dir, 'internal', 'metadata', 'metadata.go'), content);
  await chmod(join(dir, 'internal', 'metadata', 'metadata.go'), 0o444);
  await chmod(join(dir, 'internal', 'metadata'), 0o555);
  return dir;
}

describe('applyPatches', () => {
  const patch = join(work, 'id.patch');

  it('applies a patch that matches the module exactly, read-only files included', async () => {
    await writeFile(patch, PATCH);
    const dir = await moduleCopy('same', ORIGINAL);
    await applyPatches(dir, [patch], 'example.com/mod@v1.0.0');
    assert.equal(
      await readFile(join(dir, 'internal', 'metadata', 'metadata.go'), 'utf8'),
      ORIGINAL.replace('"a"', '"b"'),
    );
  });

  it('refuses, in one line naming the patch and the version, a module whose lines moved on', async () => {
    const upstream = ORIGINAL.replace('const Other = 1', 'const Other = 2');
    const dir = await moduleCopy('bumped', upstream);
    await assert.rejects(applyPatches(dir, [patch], 'example.com/mod@v1.1.0'), (err: Error) => {
      assert.match(
        err.message,
        /id\.patch does not apply to example\.com\/mod@v1\.1\.0 \(.*patch does not apply\)/,
      );
      assert.doesNotMatch(err.message, /\n/);
      return true;
    });
    assert.equal(await readFile(join(dir, 'internal', 'metadata', 'metadata.go'), 'utf8'), upstream);
  });

  it('refuses a patch of a file the module no longer has', async () => {
    const dir = join(work, 'moved');
    await mkdir(dir);
    await assert.rejects(
      applyPatches(dir, [patch], 'example.com/mod@v2.0.0'),
      /does not apply to example\.com\/mod@v2\.0\.0/,
    );
  });
});
