import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { WORKFLOWS } from './registry.ts';
import { EIN_ACTION_VALUES } from './ein-actions.ts';
import { RETRY, DATABASE_STEP, EMAIL_STEP } from '../../workflows/retry-policy.ts';

/** README.md must describe what the code does; this keeps them from drifting apart. */
const doc = await readFile(new URL('../../README.md', import.meta.url), 'utf8');

describe('README.md', () => {
  it('lists every registered workflow with its Temporal workflow type', () => {
    for (const def of Object.values(WORKFLOWS)) {
      assert.match(doc, new RegExp(`\\| \`${def.name}\`\\s+\\| \`${def.workflowType}\``), def.name);
    }
  });

  it('lists every accepted emailAction, in order', () => {
    assert.ok(doc.includes(EIN_ACTION_VALUES.map((a) => `\`${a}\``).join(', ')));
    assert.ok(doc.includes(`emailAction must be one of: ${EIN_ACTION_VALUES.join(', ')}`));
  });

  it('states the retry policy the workflows use', () => {
    assert.equal(RETRY.initialInterval, '1s');
    assert.match(
      doc,
      /first retry after\s+1 s, backoff ×2, at most 30 s between attempts, at most 8 attempts/,
    );
    assert.equal(RETRY.backoffCoefficient, 2);
    assert.equal(RETRY.maximumInterval, '30s');
    assert.equal(RETRY.maximumAttempts, 8);
    assert.equal(DATABASE_STEP.scheduleToCloseTimeout, '5m');
    assert.equal(EMAIL_STEP.heartbeatTimeout, '10s');
    assert.match(doc, /5 minutes per step/);
  });
});
