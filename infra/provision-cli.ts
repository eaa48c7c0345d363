import { cacheDir, ensureSchemathesis, provision } from './provision.ts';
import { ensureSystemPackages, TEST_SYSTEM_PACKAGES } from './system-packages.ts';

/**
 * `npm run provision`: everything `npm test` provisions, ahead of time: the
 * Temporal CLI, the MongoDB-protocol server, the pinned schemathesis (the API
 * fuzzer) and the Debian packages the tests run. `npm run dev` and `npm test`
 * call the same code themselves (dev only the first two).
 */
const started = Date.now();
try {
  console.log(`[provision] cache: ${cacheDir()}`);
  const { temporal, ferretdb } = await provision();
  console.log(`[provision] temporal: ${temporal}`);
  console.log(`[provision] ferretdb: ${ferretdb}`);
  const schemathesis = await ensureSchemathesis();
  console.log(`[provision] schemathesis: ${schemathesis.env['PYTHONPATH']}`);
  for (const [name, path] of Object.entries(await ensureSystemPackages(TEST_SYSTEM_PACKAGES))) {
    console.log(`[provision] ${name}: ${path}`);
  }
  console.log(`[provision] done in ${((Date.now() - started) / 1000).toFixed(1)}s`);
} catch (err) {
  console.error(`[provision] ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
