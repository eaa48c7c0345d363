import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  Client,
  Connection,
  ServiceError,
  WorkflowFailedError,
  WorkflowNotFoundError,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { HttpError } from '../../http-error.ts';
import { MAX_ERROR_LENGTH, temporalError } from './temporal-errors.ts';

/**
 * The 500 a Temporal failure becomes carries its cause: the gRPC error under
 * the SDK's "Failed to start Workflow", not that wrapper's words.
 */

/** A gRPC error the way @grpc/grpc-js makes one (callErrorFromStatus): message, code, details, metadata. */
function grpcError(code: number, name: string, details: string): Error {
  return Object.assign(new Error(`${code} ${name}: ${details}`), { code, details, metadata: {} });
}

const REFUSED =
  'No connection established. Last error: Error: connect ECONNREFUSED 127.0.0.1:7399 (2025-01-01T00:00:00.000Z)';

function answer(err: unknown, doing: Parameters<typeof temporalError>[1] = 'start workflow') {
  const res = temporalError(err, doing);
  assert.ok(res instanceof HttpError);
  return { status: res.status, message: res.message };
}

describe('temporalError', () => {
  it('carries the gRPC cause under the SDK ServiceError', () => {
    const err = new ServiceError('Failed to start Workflow', {
      cause: grpcError(14, 'UNAVAILABLE', REFUSED),
    });
    assert.deepEqual(answer(err), {
      status: 500,
      message: `failed to start workflow: 14 UNAVAILABLE: ${REFUSED}`,
    });
    const read = answer(
      new ServiceError('Failed to describe workflow', { cause: grpcError(14, 'UNAVAILABLE', REFUSED) }),
      'read workflow run',
    );
    assert.equal(read.message, `failed to read workflow run: 14 UNAVAILABLE: ${REFUSED}`);
  });

  it('follows a nested chain to its most specific message', () => {
    const err = new ServiceError('Failed to connect to Temporal server', {
      cause: new ServiceError('Unexpected error while making gRPC request', {
        cause: grpcError(14, 'UNAVAILABLE', REFUSED),
      }),
    });
    assert.match(
      answer(err, 'manage schedule').message,
      /^failed to manage schedule: 14 UNAVAILABLE: .*ECONNREFUSED/,
    );
  });

  it('says a deadline exceeded is Temporal not answering in time', () => {
    const deadline = grpcError(
      4,
      'DEADLINE_EXCEEDED',
      'Deadline exceeded after 0.000s,waiting for metadata filters',
    );
    const { status, message } = answer(new ServiceError('Failed to start Workflow', { cause: deadline }));
    assert.equal(status, 500);
    assert.equal(
      message,
      'failed to start workflow: Temporal did not answer before the deadline ' +
        '(4 DEADLINE_EXCEEDED: Deadline exceeded after 0.000s,waiting for metadata filters)',
    );
  });

  it("carries a failed workflow's failure", () => {
    const err = new WorkflowFailedError(
      'Workflow execution failed',
      ApplicationFailure.create({ message: 'template welcome not found' }),
      'NON_RETRYABLE_FAILURE',
    );
    assert.equal(answer(err).message, 'failed to start workflow: template welcome not found');
  });

  it('uses a gRPC error’s details when its message is empty, and a thrown non-error as is', () => {
    const bare = Object.assign(new Error(''), { code: 14, details: 'connect ECONNREFUSED', metadata: {} });
    assert.equal(
      answer(new ServiceError('Failed to start Workflow', { cause: bare })).message,
      'failed to start workflow: connect ECONNREFUSED',
    );
    assert.equal(answer('socket hang up').message, 'failed to start workflow: socket hang up');
    assert.equal(answer(new ServiceError('')).message, 'failed to start workflow: unknown error');
  });

  it('answers one bounded line, without stack frames', () => {
    const cause = new Error(
      `first line\n  second\tline\n    at connect (node:net:1:1)\n    at secret (/srv/app.ts:9:9)`,
    );
    const { message } = answer(new ServiceError('Failed to start Workflow', { cause }));
    assert.equal(message, 'failed to start workflow: first line second line');

    const long = answer(new ServiceError('Failed to start Workflow', { cause: new Error('x'.repeat(5000)) }));
    assert.equal(long.message.length, MAX_ERROR_LENGTH);
    assert.match(long.message, /^failed to start workflow: x+…$/);
    for (const { message: m } of [
      long,
      answer(new ServiceError('x', { cause: grpcError(14, 'UNAVAILABLE', REFUSED) })),
    ]) {
      assert.doesNotMatch(m, /\n|\bat .*:\d+:\d+/);
    }
  });

  it('stops on a cause chain that loops', () => {
    const a = new ServiceError('outer');
    const b = new ServiceError('inner', { cause: a });
    (a as { cause?: Error }).cause = b;
    assert.match(answer(a).message, /^failed to start workflow: (inner|outer)$/);
  });

  it('keeps 404 for an unknown run and passes HttpError through', () => {
    assert.deepEqual(answer(new WorkflowNotFoundError('workflow not found', 'wf', undefined)), {
      status: 404,
      message: 'workflow run not found',
    });
    assert.equal(answer(grpcError(5, 'NOT_FOUND', 'no such run')).status, 404);
    const own = new HttpError(409, 'workflow run is already closed');
    assert.equal(temporalError(own, 'cancel workflow run'), own);
  });
});

describe('temporalError on what @temporalio/client throws for a closed port', () => {
  const connections: Connection[] = [];
  after(() => Promise.all(connections.map((c) => c.close().catch(() => undefined))));

  /** A client of 127.0.0.1:1, where nothing listens. */
  function deadClient(retry: boolean): Client {
    const connection = Connection.lazy({ address: '127.0.0.1:1', ...(retry ? {} : { interceptors: [] }) });
    connections.push(connection);
    return new Client({ connection });
  }

  async function thrown(fn: () => Promise<unknown>): Promise<unknown> {
    try {
      await fn();
    } catch (err) {
      return err;
    }
    assert.fail('expected the call to fail');
  }

  it('start: the refused connection is the cause', async () => {
    const temporal = deadClient(false);
    const err = await thrown(() =>
      temporal.workflow.start('sendWelcomeEmail', { taskQueue: 'q', workflowId: 'w-1', args: [] }),
    );
    assert.ok(err instanceof ServiceError, String(err));
    const { status, message } = answer(err);
    assert.equal(status, 500);
    assert.match(message, /^failed to start workflow: 14 UNAVAILABLE: .*ECONNREFUSED 127\.0\.0\.1:1/);
    assert.ok(message.length <= MAX_ERROR_LENGTH);
  });

  it('describe past the deadline: the deadline is the cause', async () => {
    const temporal = deadClient(true);
    const err = await thrown(() =>
      temporal.withDeadline(Date.now() + 200, () => temporal.workflow.getHandle('w-1', 'abc').describe()),
    );
    const { status, message } = answer(err, 'read workflow run');
    assert.equal(status, 500);
    assert.match(
      message,
      /^failed to read workflow run: Temporal did not answer before the deadline \(4 DEADLINE_EXCEEDED: .+\)$/,
    );
  });
});
