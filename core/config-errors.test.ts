import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from './config.ts';
import { TEST_SECRET } from '../test/support/env.ts';

/** A bad choice stops the start with one line that names the variable and every allowed value. */
describe('configuration errors for a choice', () => {
  const load = (env: Record<string, string>) => () => loadConfig({ MAILROOM_SECRET: TEST_SECRET, ...env });

  it('LOG_LEVEL=loud lists the log levels', () => {
    assert.throws(load({ LOG_LEVEL: 'loud' }), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.equal(
        err.message,
        'invalid configuration: LOG_LEVEL must be one of: fatal, error, warn, info, debug, trace, silent (got "loud")',
      );
      return true;
    });
  });

  it('AUTH_MODE=x lists the modes', () => {
    assert.throws(load({ AUTH_MODE: 'x' }), {
      name: 'ConfigError',
      message: 'invalid configuration: AUTH_MODE must be one of: api-key, trusted-headers (got "x")',
    });
  });

  it('accepts each allowed value', () => {
    assert.equal(loadConfig({ MAILROOM_SECRET: TEST_SECRET, LOG_LEVEL: 'debug' }).logLevel, 'debug');
    assert.equal(
      loadConfig({ MAILROOM_SECRET: TEST_SECRET, AUTH_MODE: 'trusted-headers' }).authMode,
      'trusted-headers',
    );
  });
});
