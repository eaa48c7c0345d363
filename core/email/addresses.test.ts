import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  dedupeRecipients,
  hasAtSign,
  isBlockedDomain,
  isValidAddress,
  isValidMailbox,
  parseMailbox,
  toAddressList,
} from './addresses.ts';

describe('recipient normalization', () => {
  it('flattens the four recipient forms', () => {
    assert.deepEqual(toAddressList('a@example.com'), [{ email: 'a@example.com' }]);
    assert.deepEqual(toAddressList({ email: 'a@example.com', name: 'A' }), [
      { email: 'a@example.com', name: 'A' },
    ]);
    assert.deepEqual(toAddressList(['a@example.com', ' b@example.com ']), [
      { email: 'a@example.com' },
      { email: 'b@example.com' },
    ]);
    assert.deepEqual(
      toAddressList([
        { email: 'a@example.com', name: ' A ' },
        { email: 'b@example.com', name: '' },
      ]),
      [{ email: 'a@example.com', name: 'A' }, { email: 'b@example.com' }],
    );
    assert.deepEqual(toAddressList(undefined), []);
  });

  it('removes addresses repeated across to/cc/bcc, case-insensitively, keeping the first', () => {
    const out = dedupeRecipients({
      to: [{ email: 'a@example.com' }, { email: 'A@example.com' }],
      cc: [{ email: 'a@EXAMPLE.com' }, { email: 'b@example.com' }],
      bcc: [{ email: 'b@example.com' }, { email: 'c@example.com' }],
    });
    assert.deepEqual(out, {
      to: [{ email: 'a@example.com' }],
      cc: [{ email: 'b@example.com' }],
      bcc: [{ email: 'c@example.com' }],
    });
  });
});

describe('address checks', () => {
  it('accepts ordinary addresses and refuses malformed ones and header injection', () => {
    for (const ok of ['a@example.com', 'first.last+tag@sub.example.co.uk', 'a@123.example', 'a@x.c0m'])
      assert.ok(isValidAddress(ok), ok);
    for (const bad of [
      '',
      'a',
      'a@',
      '@example.com',
      'a b@example.com',
      'a@example.com\r\nBcc: x@y.z',
      'a@example.com\n',
      `${'a'.repeat(250)}@example.com`,
      // An IP address without the brackets of a literal: no top-level domain is numeric.
      'a@127.0.0.1',
      'a@10.0.0.1',
      'a@example.123',
    ])
      assert.ok(!isValidAddress(bad), JSON.stringify(bad));
    assert.ok(!isValidMailbox({ email: 'a@example.com', name: 'A\r\nBcc: x@y.z' }));
    assert.ok(isValidMailbox({ email: 'a@example.com', name: 'Ann O’Neil, Ltd.' }));
  });

  it('hasAtSign: @ and exactly the characters NFKC folds into it (U+FE6B, U+FF20), wherever they sit', () => {
    for (const text of ['ceo@b-corp.example', 'ceo\uFF20b-corp.example', 'ceo\uFE6Bb', '\uFF20', 'a @'])
      assert.ok(hasAtSign(text), text);
    for (const text of ['Ann O’Neil', 'support at acme', 'ⓐ', '\u0298', '®', '\u24D0'])
      assert.ok(!hasAtSign(text), text);
    // Every code point: a newer Unicode that folds another character into @ fails here.
    const missed: string[] = [];
    for (let code = 0; code <= 0x10ffff; code++) {
      if (code >= 0xd800 && code <= 0xdfff) continue;
      const char = String.fromCodePoint(code);
      if (hasAtSign(char) !== char.normalize('NFKC').includes('@')) missed.push(code.toString(16));
    }
    assert.deepEqual(missed, []);
  });

  it('parses sender strings', () => {
    assert.deepEqual(parseMailbox('a@example.com'), { email: 'a@example.com' });
    assert.deepEqual(parseMailbox('Acme Billing <billing@acme.example>'), {
      email: 'billing@acme.example',
      name: 'Acme Billing',
    });
    assert.deepEqual(parseMailbox('"Acme, Inc." <billing@acme.example>'), {
      email: 'billing@acme.example',
      name: 'Acme, Inc.',
    });
    assert.deepEqual(parseMailbox('<billing@acme.example>'), { email: 'billing@acme.example' });
    assert.equal(parseMailbox('Acme <a@b> <c@d>'), undefined);
    // Blanks around are trimmed; a line break anywhere stays, for the checks to refuse.
    assert.deepEqual(parseMailbox('  a@example.com\t'), { email: 'a@example.com' });
    const broken = parseMailbox('a@example.com\r\n');
    assert.ok(broken === undefined || !isValidMailbox(broken));
    const named = parseMailbox('\r\nBcc: e@x.com\r\n <a@example.com>');
    assert.ok(named === undefined || !isValidMailbox(named));
  });

  it('matches blocked domains and their subdomains only, ignoring case', () => {
    const blocked = ['blocked.example', 'spam.test'];
    assert.ok(isBlockedDomain('x@blocked.example', blocked));
    assert.ok(isBlockedDomain('x@BLOCKED.Example', blocked));
    assert.ok(isBlockedDomain('x@mail.blocked.example', blocked));
    assert.ok(isBlockedDomain('x@blocked.example.', blocked));
    assert.ok(!isBlockedDomain('x@notblocked.example', blocked));
    assert.ok(!isBlockedDomain('x@blocked.example.org', blocked));
    assert.ok(!isBlockedDomain('x@example.com', []));
  });
});
