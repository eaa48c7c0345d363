import { it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { FERRETDB_SOURCE_DIR, ferretDbSourceFiles } from './provision.ts';

/**
 * The Go code of our FerretDB wrapper (infra/ferretdb) besides FerretDB itself:
 * its own tests, run with the Go toolchain that builds it (they need nothing
 * but Go's standard library).
 */
it("the wrapper's packages pass their Go tests: log handler, collector target (go test)", async () => {
  const { stdout } = await promisify(execFile)('go', ['test', '-count=1', './lazylog', './gcsettings'], {
    cwd: FERRETDB_SOURCE_DIR,
  });
  assert.match(stdout, /^ok\s+mailroom\/infra\/ferretdb\/lazylog/m);
  assert.match(stdout, /^ok\s+mailroom\/infra\/ferretdb\/gcsettings/m);
});

it('the build cache key covers every Go file `go build` compiles (go list)', async () => {
  const { stdout } = await promisify(execFile)(
    'go',
    ['list', '-f', '{{$d := .Dir}}{{range .GoFiles}}{{$d}}/{{.}}\n{{end}}', './...'],
    { cwd: FERRETDB_SOURCE_DIR },
  );
  const compiled = stdout
    .split('\n')
    .filter(Boolean)
    .map((path) => path.slice(FERRETDB_SOURCE_DIR.length).replace(/^\//, ''))
    .sort();
  const hashed = (await ferretDbSourceFiles()).filter((file) => file.endsWith('.go'));
  assert.deepEqual(hashed, compiled);
  assert.ok(compiled.includes('main.go') && compiled.includes('lazylog/lazylog.go'));
  assert.ok(compiled.includes('gcsettings/gcsettings.go'));
});
