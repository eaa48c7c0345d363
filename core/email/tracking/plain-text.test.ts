import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isPlainText } from './plain-text.ts';

describe('isPlainText (what an unauthenticated send may say in its own words)', () => {
  it('accepts names, places, durations, codes and addresses of a signup flow', () => {
    for (const value of [
      'Jordan Rivera',
      'María-José O’Neil',
      'Dr. Ada King, J.R.R.',
      '李小龍',
      'St. Louis, MO',
      '30 minutes',
      '482913',
      '203.0.113.24',
      '2001:db8::42',
      'v1.2',
    ])
      assert.equal(isPlainText(value, 64), true, value);
  });

  it('refuses anything a mail client may turn into a link or an address, and second lines', () => {
    for (const value of [
      'https://evil.example/login',
      'see evil.example',
      'www.evil.example',
      'Login at EVIL.EXAMPLE/x',
      'evil。example',
      'evil．example',
      'evil｡example',
      'bücher.example',
      'xn--bcher-kva.example',
      'javascript://%0aalert(1)',
      'help@evil.example',
      'help＠evil',
      'Jordan\nsecond line',
      'Jordan\r',
      'Jordan\u2028second',
      'evil\u200b.example',
      '\u202eelpmaxe.live',
    ])
      assert.equal(isPlainText(value, 64), false, JSON.stringify(value));
  });

  it('bounds the length', () => {
    assert.equal(isPlainText('x'.repeat(64), 64), true);
    assert.equal(isPlainText('x'.repeat(65), 64), false);
  });
});
