/**
 * `npm run build:workflows`: bundles workflows/ once, ahead of time, into
 * dist/workflow-bundle.js. Production workers set WORKFLOW_BUNDLE_PATH to it
 * and start without running webpack (faster start, the exact code that was
 * tested and replayed).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOWS_PATH } from './create-worker.ts';

const out = resolve(
  fileURLToPath(new URL('..', import.meta.url)),
  process.argv[2] ?? 'dist/workflow-bundle.js',
);
const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH });
await mkdir(dirname(out), { recursive: true });
await writeFile(out, code);
console.log(
  `workflow bundle written to ${out} (${(code.length / 1024).toFixed(0)} KiB); set WORKFLOW_BUNDLE_PATH=${out}`,
);
