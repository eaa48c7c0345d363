import { cacheDir, ensureSchemathesis, provision } from './provision.ts';

/**
 * `npm run provision`: fetch the Temporal CLI, build the MongoDB-protocol
 * server and install the pinned schemathesis (the API fuzzer) ahead of time (CI does this as its own step so the test step's time
 * is the tests'). `npm run dev` and `npm test` call the same code themselves.
 */
const started = Date.now();
try {
  console.log(`[provision] cache: ${cacheDir()}`);
  const { temporal, ferretdb } = await provision();
  console.log(`[provision] temporal: ${temporal}`);
  console.log(`[provision] ferretdb: ${ferretdb}`);
  const schemathesis = await ensureSchemathesis();
  console.log(`[provision] schemathesis: ${schemathesis.env['PYTHONPATH']}`);
  console.log(`[provision] done in ${((Date.now() - started) / 1000).toFixed(1)}s`);
} catch (err) {
  console.error(`[provision] ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
