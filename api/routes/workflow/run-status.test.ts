import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventType } from './history-events.ts';
import { deepestMessage, mapStatus, timestampToIso } from './run-status.ts';

const {
  EVENT_TYPE_WORKFLOW_EXECUTION_STARTED: WORKFLOW_EXECUTION_STARTED,
  EVENT_TYPE_WORKFLOW_TASK_SCHEDULED: WORKFLOW_TASK_SCHEDULED,
  EVENT_TYPE_WORKFLOW_TASK_STARTED: WORKFLOW_TASK_STARTED,
} = EventType;

describe('mapStatus', () => {
  const queued = [{ eventType: WORKFLOW_EXECUTION_STARTED }, { eventType: WORKFLOW_TASK_SCHEDULED }];
  const picked = [...queued, { eventType: WORKFLOW_TASK_STARTED }];

  it('maps a RUNNING execution no worker has touched to pending, otherwise running', () => {
    assert.equal(mapStatus('RUNNING', queued), 'pending');
    assert.equal(mapStatus('RUNNING', picked), 'running');
  });

  it('maps closed executions to the interface’s statuses', () => {
    assert.equal(mapStatus('COMPLETED', picked), 'completed');
    assert.equal(mapStatus('FAILED', picked), 'failed');
    assert.equal(mapStatus('TIMED_OUT', picked), 'failed');
    assert.equal(mapStatus('TERMINATED', queued), 'failed');
    assert.equal(mapStatus('CANCELLED', picked), 'cancelled');
  });
});

describe('deepestMessage', () => {
  it('returns the message at the end of the cause chain', () => {
    const root = new Error('user not found: u1');
    const activity = new Error('Activity task failed', { cause: root });
    const workflow = new Error('Workflow execution failed', { cause: activity });
    assert.equal(deepestMessage(workflow), 'user not found: u1');
  });

  it('keeps the last non-empty message', () => {
    assert.equal(deepestMessage(new Error('outer', { cause: new Error('') })), 'outer');
    assert.equal(deepestMessage('not an error'), undefined);
  });
});

describe('timestampToIso', () => {
  it('converts protobuf timestamps (number or Long seconds) to ISO 8601', () => {
    assert.equal(timestampToIso({ seconds: 1_700_000_000, nanos: 123_000_000 }), '2023-11-14T22:13:20.123Z');
    assert.equal(timestampToIso({ seconds: { toNumber: () => 1_700_000_000 } }), '2023-11-14T22:13:20.000Z');
    assert.equal(timestampToIso(null), undefined);
  });
});
