import { before, describe, it } from 'node:test';
import { parseKey } from './key-format.ts';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createLogger } from '../logger.ts';
import { useScratchDatabase } from '../../test/support/scratch-database.ts';
import { runKeyCommand, UsageError } from './commands.ts';
import { createKeyStore, type KeyStore } from './key-store.ts';

/** `npm run keys -- …` against a real database: what the operator types and what they paste. */
describe('npm run keys', () => {
  const database = useScratchDatabase('keys');
  let store: KeyStore;
  before(() => {
    store = createKeyStore(database.db, createLogger('test', { logLevel: 'silent', logPretty: false }));
  });

  it('create prints the key once, as the last line, and the key verifies with its scopes', async () => {
    const company = randomUUID();
    const lines = await runKeyCommand(store, [
      'create',
      '--company',
      company.toUpperCase(),
      '--name',
      'billing backend',
      '--scopes',
      'email:send,workflows:trigger',
    ]);
    const key = lines.at(-1)!;
    assert.match(key, /^mr_[0-9a-f]{24}_[A-Za-z0-9_-]{43}$/);
    assert.match(lines[0]!, new RegExp(`for company ${company} with scopes email:send, workflows:trigger`));
    const verified = await store.verify(key);
    assert.equal(verified?.companyId, company);
    assert.deepEqual(verified?.scopes, ['email:send', 'workflows:trigger']);
  });

  it('create --test makes a test-mode key (mr_test_…), listed as mode=test', async () => {
    const company = randomUUID();
    const lines = await runKeyCommand(store, [
      'create',
      '--company',
      company,
      '--name',
      'ci',
      '--scopes',
      'email:send',
      '--test',
    ]);
    const plaintext = lines[lines.length - 1]!;
    assert.match(plaintext, /^mr_test_[0-9a-f]{24}_/);
    assert.equal((await store.verify(plaintext))?.test, true);
    assert.match((await runKeyCommand(store, ['list', '--company', company]))[0]!, /mode=test$/);
  });

  it('list shows ids, companies and scopes but never a secret; revoke ends a key', async () => {
    const company = randomUUID();
    const key = (
      await runKeyCommand(store, ['create', '--company', company, '--name', 'x', '--scopes', 'all'])
    ).at(-1)!;
    const id = key.split('_')[1]!;
    const listed = await runKeyCommand(store, ['list', '--company', company]);
    assert.equal(listed.length, 1);
    assert.match(listed[0]!, new RegExp(`^${id}  active  company=${company}`));
    assert.equal(listed[0]!.includes(parseKey(key)!.secret), false);
    assert.deepEqual(await runKeyCommand(store, ['revoke', id]), [
      `revoked ${id}: requests with it are refused within seconds`,
    ]);
    assert.equal(await store.verify(key), undefined);
    assert.match((await runKeyCommand(store, ['list', '--company', company]))[0]!, / revoked /);
    // Revoked already, or never made: one line saying so, not the usage (the command line was right).
    for (const gone of [id, 'ffffffffffffffffffffffff'])
      await assert.rejects(
        runKeyCommand(store, ['revoke', gone]),
        (err) =>
          !(err instanceof UsageError) &&
          err instanceof Error &&
          err.message === `no live key with id ${gone}`,
      );
  });

  it('refuses a wrong command line with a message saying what to fix', async () => {
    const cases: Array<[string[], RegExp]> = [
      [[], /no command given/],
      [
        ['create', '--company', 'acme', '--name', 'x', '--scopes', 'all'],
        /--company must be the company UUID/,
      ],
      [['create', '--company', randomUUID(), '--name', 'x'], /--scopes is required/],
      [
        ['create', '--company', randomUUID(), '--name', 'x', '--scopes', 'email:sendd'],
        /unknown scope\(s\): email:sendd/,
      ],
      [['create', '--company', randomUUID(), '--scopes', 'all'], /--name must be/],
    ];
    for (const [argv, message] of cases) {
      await assert.rejects(
        runKeyCommand(store, argv),
        (err) => err instanceof UsageError && message.test(err.message),
      );
    }
  });
});
