import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { firstFormatToken } from '../../../test/support/click-tokens.ts';
import { TEST_SECRET } from '../../../test/support/env.ts';
import { CLICK_TOKEN_MAX_LENGTH, CLICK_URL_MAX_BYTES, clickTokens, trackableUrl } from './click-token.ts';

const tokens = clickTokens(TEST_SECRET);
const EMAIL_ID = '0f8fad5b-d9cb-469f-a165-70867728950e';
const URL_A = 'https://shop.example/cart?item=42&ref=mail#top';

/** Flips one base64url character of `text` at `index` to another valid one. */
function flip(text: string, index: number): string {
  const c = text[index]!;
  return text.slice(0, index) + (c === 'A' ? 'B' : 'A') + text.slice(index + 1);
}

describe('click tokens', () => {
  it('round-trips the email id and the URL', () => {
    const token = tokens.sign(EMAIL_ID, URL_A)!;
    assert.match(token, /^[\w-]+\.[\w-]{22}$/);
    assert.deepEqual(tokens.verify(token), {
      emailId: EMAIL_ID,
      url: URL_A,
      expiresAt: tokens.verify(token)!.expiresAt,
    });
  });

  it('carries its expiry: the lifetime after signing, in whole seconds (365 days by default)', () => {
    const signedAt = Date.UTC(2026, 0, 1, 12, 0, 0, 250);
    const day = 86_400_000;
    const at = (now: number, lifetimeMs?: number) =>
      clickTokens(TEST_SECRET, { now: () => now, ...(lifetimeMs ? { lifetimeMs } : {}) });
    const token = at(signedAt).sign(EMAIL_ID, URL_A)!;
    // Verifying needs no clock: the caller compares (the service refuses expired links).
    assert.equal(tokens.verify(token)?.expiresAt, signedAt - 250 + 1000 + 365 * day);
    assert.equal(
      tokens.verify(at(signedAt, 7 * day).sign(EMAIL_ID, URL_A)!)?.expiresAt,
      signedAt + 750 + 7 * day,
    );
    // The expiry is signed: changing it breaks the MAC.
    const [payload, mac] = token.split('.') as [string, string];
    const bytes = Buffer.from(payload, 'base64url');
    bytes.writeUInt32BE(bytes.readUInt32BE(1) + 86_400 * 365, 1);
    assert.equal(tokens.verify(`${bytes.toString('base64url')}.${mac}`), undefined);
  });

  it('refuses the unreleased first format (no expiry), even correctly signed', () => {
    assert.equal(tokens.verify(firstFormatToken(TEST_SECRET, EMAIL_ID, URL_A)), undefined);
  });

  it('normalises the URL as the WHATWG parser does, and keeps non-ASCII', () => {
    assert.equal(tokens.verify(tokens.sign(EMAIL_ID, 'HTTPS://Example.COM')!)?.url, 'https://example.com/');
    const url = 'https://例え.example/パス?q=ü';
    assert.equal(tokens.verify(tokens.sign(EMAIL_ID, url)!)?.url, new URL(url).href);
  });

  it('is short: ~1.33 bytes per URL byte plus 51 characters', () => {
    const token = tokens.sign(EMAIL_ID, 'https://a.example/x')!;
    assert.ok(token.length < 'https://a.example/x'.length * 1.34 + 52, token);
  });

  it('signs only absolute http(s) URLs of bounded length', () => {
    for (const url of [
      'mailto:a@b.example',
      'tel:+123',
      '#top',
      '/relative',
      'javascript:alert(1)',
      'ftp://x.example/',
    ])
      assert.equal(tokens.sign(EMAIL_ID, url), undefined, url);
    assert.equal(tokens.sign(EMAIL_ID, `https://a.example/${'x'.repeat(CLICK_URL_MAX_BYTES)}`), undefined);
    assert.equal(trackableUrl('  https://a.example/ok  '), 'https://a.example/ok');
    assert.throws(() => tokens.sign('not-a-uuid', URL_A));
  });

  it('refuses a tampered payload, a tampered mac and a swapped payload', () => {
    const token = tokens.sign(EMAIL_ID, URL_A)!;
    const [payload, mac] = token.split('.') as [string, string];
    for (let i = 0; i < payload.length - 1; i += 7)
      assert.equal(tokens.verify(`${flip(payload, i)}.${mac}`), undefined, `payload char ${i}`);
    for (let i = 0; i < mac.length - 1; i++)
      assert.equal(tokens.verify(`${payload}.${flip(mac, i)}`), undefined, `mac char ${i}`);
    const other = tokens.sign(randomUUID(), 'https://evil.example/')!;
    assert.equal(tokens.verify(`${other.split('.')[0]}.${mac}`), undefined);
  });

  it('refuses truncated tokens at every length', () => {
    const token = tokens.sign(EMAIL_ID, URL_A)!;
    for (let n = 0; n < token.length; n++) assert.equal(tokens.verify(token.slice(0, n)), undefined, `${n}`);
  });

  it('refuses a token signed with another secret', () => {
    const foreign = clickTokens('another-secret-of-at-least-32-characters!').sign(EMAIL_ID, URL_A)!;
    assert.equal(tokens.verify(foreign), undefined);
  });

  it('refuses a payload signed with the bare server secret (the click key is derived)', async () => {
    const { createHmac } = await import('node:crypto');
    const payload = tokens.sign(EMAIL_ID, URL_A)!.split('.')[0]!;
    const mac = createHmac('sha256', TEST_SECRET)
      .update(Buffer.from(payload, 'base64url'))
      .digest()
      .subarray(0, 16)
      .toString('base64url');
    assert.equal(tokens.verify(`${payload}.${mac}`), undefined);
  });

  it('refuses tokens of the wrong shape', () => {
    const token = tokens.sign(EMAIL_ID, URL_A)!;
    const [payload, mac] = token.split('.') as [string, string];
    const wrong: unknown[] = [
      undefined,
      42,
      '',
      '.',
      token.replace('.', ''),
      `.${mac}`,
      `${payload}.`,
      `${payload}.${mac}.${mac}`,
      `${payload}=.${mac}`,
      `+${payload.slice(1)}.${mac}`,
      `${payload.slice(0, -1)}/.${mac}`,
      `${payload}.${mac}A`,
      `${payload} .${mac}`,
      `${payload}.${mac}`.padEnd(CLICK_TOKEN_MAX_LENGTH + 1, 'A'),
    ];
    for (const value of wrong) assert.equal(tokens.verify(value), undefined, String(value));
    // A non-canonical spelling of the same bytes: 40 payload bytes end in a
    // character with 4 unused bits; setting one decodes to the same bytes.
    const [short, shortMac] = tokens.sign(EMAIL_ID, 'https://a.example/x')!.split('.') as [string, string];
    assert.equal(Buffer.from(short, 'base64url').length % 3, 1);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const twin = `${short.slice(0, -1)}${alphabet[alphabet.indexOf(short.at(-1)!) + 1]!}`;
    assert.deepEqual(Buffer.from(twin, 'base64url'), Buffer.from(short, 'base64url'));
    assert.equal(tokens.verify(`${twin}.${shortMac}`), undefined);
    // The same with 2 unused bits (payload bytes 3n + 2), and in the MAC (16 bytes: 4 unused bits).
    const [longer, longerMac] = tokens.sign(EMAIL_ID, 'https://a.example/xy')!.split('.') as [string, string];
    assert.equal(Buffer.from(longer, 'base64url').length % 3, 2);
    const twinOf = (text: string) => `${text.slice(0, -1)}${alphabet[alphabet.indexOf(text.at(-1)!) + 1]!}`;
    assert.deepEqual(Buffer.from(twinOf(longer), 'base64url'), Buffer.from(longer, 'base64url'));
    assert.equal(tokens.verify(`${twinOf(longer)}.${longerMac}`), undefined);
    assert.deepEqual(Buffer.from(twinOf(longerMac), 'base64url'), Buffer.from(longerMac, 'base64url'));
    assert.equal(tokens.verify(`${longer}.${twinOf(longerMac)}`), undefined);
    assert.ok(tokens.verify(`${longer}.${longerMac}`), 'the canonical spelling still verifies');
  });
});
