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

describe('EMAIL_FROM', () => {
  const load = (from: string) => () => loadConfig({ MAILROOM_SECRET: TEST_SECRET, EMAIL_FROM: from });

  it('an address or "Name <address>" is taken', () => {
    for (const from of ['no-reply@acme.com', 'Acme <no-reply@acme.com>', '"Acme, Inc." <no-reply@acme.com>'])
      assert.equal(load(from)().emailFrom, from);
  });

  it('anything else stops the start, naming the variable (every send would carry it)', () => {
    for (const from of ['notanemail', 'Acme <notanemail>', 'Acme <a@b.com', 'a@b.com\r\nBcc: x@y.z'])
      assert.throws(load(from), {
        name: 'ConfigError',
        message: /^invalid configuration: EMAIL_FROM must be an address or "Name <address>"/,
      });
  });
});
