import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DefaultLogger, bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOWS_PATH } from '../../worker/create-worker.ts';
import { mongoUri, temporalAddress } from '../support/env.ts';
import { CASES } from './cases.ts';
import { ScaleStack } from './stack.ts';

/**
 * `npm test` runs the scale suite (test/scale/run.ts runs it on its own)
 * against the suite's Temporal and database: two gateway processes behind
 * the round-robin proxy, two worker processes, a database and task queue of
 * their own. Each case is one test; its figures are in the failure message.
 */

describe('two gateways and two workers (test/scale)', { concurrency: 1 }, () => {
  let stack: ScaleStack;
  let scratch: string;

  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'mailroom-scale-'));
    const bundlePath = join(scratch, 'workflow-bundle.js');
    const { code } = await bundleWorkflowCode({
      workflowsPath: WORKFLOWS_PATH,
      logger: new DefaultLogger('WARN'),
    });
    await writeFile(bundlePath, code);
    const mongo = new URL(mongoUri());
    mongo.pathname = '/';
    stack = await new ScaleStack({
      temporalAddress: temporalAddress(),
      mongoUri: mongo.toString(),
      bundlePath,
      scratch,
    }).start();
  });

  after(async () => {
    await stack?.close();
    await rm(scratch, { recursive: true, force: true });
  });

  for (const c of CASES)
    it(c.name, async () => {
      const result = await c.run(stack);
      assert.deepEqual(result.problems, [], `${JSON.stringify(result.figures, null, 2)}\nlogs: ${scratch}`);
    });
});
