import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { WORKFLOWS } from './registry.ts';
import { EIN_ACTION_VALUES } from './ein-actions.ts';
import { RETRY, DATABASE_LOCAL_STEP, DATABASE_STEP, EMAIL_STEP } from '../../workflows/retry-policy.ts';

/** The documentation must describe what the code does; this keeps them from drifting apart. */
const api = await readFile(new URL('../../docs/api.md', import.meta.url), 'utf8');
const workflows = await readFile(new URL('../../docs/workflows.md', import.meta.url), 'utf8');

describe('docs/api.md and docs/workflows.md', () => {
  it('lists every registered workflow with its Temporal workflow type', () => {
    for (const def of Object.values(WORKFLOWS)) {
      assert.match(api, new RegExp(`\\| \`${def.name}\`\\s+\\| \`${def.workflowType}\``), def.name);
    }
  });

  it('lists every accepted emailAction, in order', () => {
    assert.ok(api.includes(EIN_ACTION_VALUES.map((a) => `\`${a}\``).join(', ')));
    assert.ok(api.includes(`emailAction must be one of: ${EIN_ACTION_VALUES.join(', ')}`));
  });

  it('states the retry policy the workflows use', () => {
    assert.equal(RETRY.initialInterval, '1s');
    assert.match(
      workflows,
      /first retry after\s+1 s, backoff ×2, at most 30 s between attempts, at most 8 attempts/,
    );
    assert.equal(RETRY.backoffCoefficient, 2);
    assert.equal(RETRY.maximumInterval, '30s');
    assert.equal(RETRY.maximumAttempts, 8);
    assert.equal(DATABASE_STEP.scheduleToCloseTimeout, '5m');
    assert.equal(EMAIL_STEP.heartbeatTimeout, '10s');
    assert.match(workflows, /5 minutes per step/);
  });

  it('says the short database steps are local activities with the database steps’ timeouts and retries', () => {
    assert.deepEqual(DATABASE_LOCAL_STEP, {
      startToCloseTimeout: DATABASE_STEP.startToCloseTimeout,
      scheduleToCloseTimeout: DATABASE_STEP.scheduleToCloseTimeout,
      retry: RETRY,
    });
    assert.match(workflows, /short database steps[^.]*are \*\*local activities\*\*/);
    assert.match(workflows, /Same timeouts and retries/);
  });
});
