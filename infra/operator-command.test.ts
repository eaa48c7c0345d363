import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mongoUri } from '../test/support/env.ts';
import { operatorCommand } from '../test/support/operator-cli.ts';
import { useScratchDatabase } from '../test/support/scratch-database.ts';
import { operatorDatabaseUri } from './operator-command.ts';

describe('operator commands (npm run keys, npm run emails)', () => {
  const database = useScratchDatabase('operator');
  /** `npm run keys -- …` as the operator runs it, on this file's database. */
  const keys = (...args: string[]) => {
    const uri = new URL(mongoUri());
    uri.pathname = `/${database.db.databaseName}`;
    return operatorCommand('keys-cli.ts', uri.toString(), args);
  };

  it('use MONGODB_URI, else the database npm run dev runs, on DEV_MONGO_PORT as npm run dev reads it', () => {
    assert.equal(operatorDatabaseUri({}), 'mongodb://127.0.0.1:27017/mailroom');
    assert.equal(operatorDatabaseUri({ DEV_MONGO_PORT: '27310' }), 'mongodb://127.0.0.1:27310/mailroom');
    assert.equal(operatorDatabaseUri({ DEV_MONGO_PORT: '' }), 'mongodb://127.0.0.1:27017/mailroom');
    assert.equal(
      operatorDatabaseUri({ MONGODB_URI: 'mongodb://db.internal:27017/mail', DEV_MONGO_PORT: '27310' }),
      'mongodb://db.internal:27017/mail',
    );
  });

  it('a right command line that cannot be done prints one line, no usage, and exits 1', async () => {
    const { code, out } = await keys('revoke', 'ffffffffffffffffffffffff');
    assert.equal(code, 1);
    assert.equal(out, 'keys: no live key with id ffffffffffffffffffffffff\n');
  });

  it('a wrong command line prints why, then the usage, and exits 1', async () => {
    const { code, out } = await keys('revoke');
    assert.equal(code, 1);
    assert.match(out, /^revoke needs the key id \(see `list`\)\nusage: npm run keys -- create /);
  });
});
