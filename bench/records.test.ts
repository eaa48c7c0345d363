import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRecordsCount, recordsMinimum } from './records.ts';

describe('BENCH_RECORDS', () => {
  it('accepts a whole number written with separators or an exponent', () => {
    assert.equal(parseRecordsCount('1_000_000', false), 1_000_000);
    assert.equal(parseRecordsCount('1e6', false), 1_000_000);
  });

  it('refuses, saying the minimum, a size too small for the run’s own sample records', () => {
    // A full run measures 11,000 records of its own (every other record at most): 22,000.
    assert.equal(recordsMinimum(false), 22_000);
    assert.equal(recordsMinimum(true), 10_000);
    assert.throws(() => parseRecordsCount('10000', false), /at least 22000 for a full run/);
    assert.equal(parseRecordsCount('10000', true), 10_000);
    assert.throws(() => parseRecordsCount('9999', true), /at least 10000, not "9999"/);
    assert.throws(() => parseRecordsCount('lots', true), /whole number/);
  });
});
