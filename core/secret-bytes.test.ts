import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { secretBase64url } from './secret-bytes.ts';

describe('secret bytes', () => {
  it('hands out distinct values of the asked length, across refills of the pool', () => {
    const seen = new Set<string>();
    // 18 bytes × 1,000 is more than four pools.
    for (let i = 0; i < 1000; i++) {
      const value = secretBase64url(18);
      assert.match(value, /^[A-Za-z0-9_-]{24}$/);
      seen.add(value);
    }
    assert.equal(seen.size, 1000);
  });

  it('spreads its bytes evenly (no stretch of the pool handed out unfilled)', () => {
    const counts = new Array<number>(256).fill(0);
    for (let i = 0; i < 2000; i++)
      for (const byte of Buffer.from(secretBase64url(32), 'base64url')) counts[byte]!++;
    // 64,000 bytes: 250 expected per value; zeros from an unfilled pool would pile up on 0.
    assert.ok(counts[0]! < 400, `${counts[0]} zero bytes`);
    assert.ok(Math.min(...counts) > 150, `a value seen only ${Math.min(...counts)} times`);
  });
});
