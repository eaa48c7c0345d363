import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createCheckCache } from './check-cache.ts';

describe('suppression check cache', () => {
  it('answers a checked address again, suppressed or not, until it changes here', () => {
    const cache = createCheckCache(60_000);
    assert.equal(cache.get('c/a@example.com'), undefined);
    cache.fill(cache.begin(), 'c/a@example.com', null);
    cache.fill(cache.begin(), 'c/b@example.com', 'bounce');
    assert.equal(cache.get('c/a@example.com'), null);
    assert.equal(cache.get('c/b@example.com'), 'bounce');
    cache.changed('c/a@example.com');
    assert.equal(cache.get('c/a@example.com'), undefined);
    assert.equal(cache.get('other/a@example.com'), undefined, 'another list has its own entries');
  });

  it('never keeps a read that began before an add or a remove', () => {
    const cache = createCheckCache(60_000);
    const reading = cache.begin();
    cache.changed('c/a@example.com'); // an add lands while the read is on the wire
    cache.fill(reading, 'c/a@example.com', null);
    assert.equal(cache.get('c/a@example.com'), undefined);
  });

  it('with no cache time, every check is read', () => {
    const cache = createCheckCache(0);
    cache.fill(cache.begin(), 'c/a@example.com', null);
    assert.equal(cache.get('c/a@example.com'), undefined);
  });
});
