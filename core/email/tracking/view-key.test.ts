import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { emailIdOfViewKey, looksLikeViewKey, newViewKey, viewKeyMatches } from './view-key.ts';

describe('view keys', () => {
  it('are 46 base64url characters: the email id (22) and 144 random bits (24)', () => {
    const id = randomUUID();
    const key = newViewKey(id);
    assert.match(key, /^[A-Za-z0-9_-]{46}$/);
    assert.equal(key.slice(0, 22), Buffer.from(id.replace(/-/g, ''), 'hex').toString('base64url'));
    assert.equal(Buffer.from(key.slice(22), 'base64url').length, 18);
    assert.ok(looksLikeViewKey(key));
  });

  it('name their email id (lower case), and two keys for one id differ in the secret part', () => {
    const id = randomUUID();
    const a = newViewKey(id);
    const b = newViewKey(id.toUpperCase());
    assert.equal(emailIdOfViewKey(a), id);
    assert.equal(emailIdOfViewKey(b), id);
    assert.equal(a.slice(0, 22), b.slice(0, 22));
    assert.notEqual(a.slice(22), b.slice(22));
  });

  it('refuse to be built from a non-UUID id', () => {
    assert.throws(() => newViewKey('not-a-uuid'));
  });

  it('malformed keys name no record', () => {
    const key = newViewKey(randomUUID());
    for (const bad of [
      '',
      key.slice(0, 45),
      `${key}A`,
      `${key.slice(0, 45)}=`,
      `${key.slice(0, 10)}+${key.slice(11)}`,
      'A'.repeat(32),
    ])
      assert.equal(emailIdOfViewKey(bad), undefined, bad);
  });

  it('a non-canonical spelling of the id part names no record', () => {
    // The 22nd character holds 2 bits of the id and 4 padding bits (zero when canonical).
    const key = newViewKey('00000000-0000-4000-8000-000000000000');
    assert.equal(key[21], 'A');
    const variant = `${key.slice(0, 21)}B${key.slice(22)}`;
    assert.equal(Buffer.from(variant.slice(0, 22), 'base64url').length, 16);
    assert.equal(emailIdOfViewKey(variant), undefined);
  });

  it('match only the identical stored key', () => {
    const key = newViewKey(randomUUID());
    assert.ok(viewKeyMatches(key, key));
    assert.ok(!viewKeyMatches(key, newViewKey(randomUUID())));
    assert.ok(!viewKeyMatches(key, key.slice(0, 45)));
    assert.ok(!viewKeyMatches(key, undefined));
    assert.ok(!viewKeyMatches(key, null));
  });
});
