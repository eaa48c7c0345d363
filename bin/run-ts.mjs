/**
 * `node bin/run-ts.mjs <entry.ts> [args…]`: runs a TypeScript entry point (the
 * gateway, the worker, the bench) with tsx registered in the main thread only.
 *
 * Why not `node --import tsx`: Node passes that flag on to every worker
 * thread, so the Temporal worker's workflow thread, which runs only plain
 * JavaScript (the SDK and the workflow bundle), would start tsx too and send
 * each of its module loads through tsx's hooks: ~150 ms more per worker start
 * (docs/benchmarks.md, worker_start).
 */
import { resolve } from 'node:path';
import process from 'node:process';
import { pathToFileURL } from 'node:url';
import { register } from 'tsx/esm/api';

const [entry, ...args] = process.argv.slice(2);
if (!entry) {
  process.stderr.write('usage: node bin/run-ts.mjs <entry.ts> [args…]\n');
  process.exit(2);
}
register();
const path = resolve(entry);
// What the entry sees is what `node --import tsx <entry.ts> [args…]` would show it.
process.argv = [process.argv[0], path, ...args];
await import(pathToFileURL(path).href);
