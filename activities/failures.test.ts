import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApplicationFailure } from '@temporalio/activity';
import { MongoClient } from 'mongodb';
import { MailroomError, type ErrorKind } from '../core/errors.ts';
import { toActivityFailure } from './failures.ts';

describe('toActivityFailure', () => {
  it('retries only transient email-core failures; the rest fail the run with their message', () => {
    const kinds: Array<[ErrorKind, boolean]> = [
      ['transient', false],
      ['validation', true],
      ['unauthorized', true],
      ['not_found', true],
      ['not_configured', true],
      ['provider_rejected', true],
      ['suppressed', true],
    ];
    for (const [kind, nonRetryable] of kinds) {
      const failure = toActivityFailure(new MailroomError(kind, `boom ${kind}`));
      assert.ok(failure instanceof ApplicationFailure, kind);
      assert.equal(failure.message, `boom ${kind}`);
      assert.equal(failure.type, kind);
      assert.equal(failure.nonRetryable, nonRetryable, kind);
    }
  });

  it('retries an unreachable database', async () => {
    // The driver's own error for a database nobody answers on.
    const client = new MongoClient('mongodb://127.0.0.1:1/x', { serverSelectionTimeoutMS: 200 });
    const err = await client
      .db()
      .collection('users')
      .findOne({})
      .then(
        () => assert.fail('expected the query to fail'),
        (e: unknown) => e,
      );
    await client.close();
    const failure = toActivityFailure(err);
    assert.ok(failure instanceof ApplicationFailure);
    assert.equal(failure.nonRetryable, false);
    assert.equal(failure.type, 'transient');
  });

  it('passes ApplicationFailures and unexpected errors through unchanged', () => {
    const app = ApplicationFailure.nonRetryable('user not found: u1', 'not_found');
    assert.equal(toActivityFailure(app), app);
    const bug = new TypeError('x is undefined');
    assert.equal(toActivityFailure(bug), bug);
  });
});
