import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '../../logger.ts';
import { createOpenBuffer, type BufferedOpen, type FlushReport } from './open-buffer.ts';

const logger = createLogger('test', { logLevel: 'silent', logPretty: false });

/** A buffer whose batches land in `batches` (each open counts as recorded). */
function recordingBuffer(options: { maxPending?: number; fail?: boolean } = {}) {
  const batches: BufferedOpen[][] = [];
  const reports: FlushReport[] = [];
  const buffer = createOpenBuffer({
    logger,
    // Long interval: these tests flush explicitly.
    flushIntervalMs: 60_000,
    ...(options.maxPending === undefined ? {} : { maxPending: options.maxPending }),
    write: async (batch) => {
      if (options.fail) throw new Error('database down');
      batches.push(batch);
      return batch.length;
    },
    onFlush: (r) => reports.push(r),
  });
  return { buffer, batches, reports };
}

describe('open buffer', () => {
  it('coalesces repeated hits of one key into one open with its first and latest time', async () => {
    const { buffer, batches } = recordingBuffer();
    const t = (s: number) => Date.UTC(2030, 0, 1, 0, 0, s);
    buffer.add('key-a', t(1));
    buffer.add('key-b', t(2));
    buffer.add('key-a', t(5));
    buffer.add('key-a', t(3));
    await buffer.flush();
    assert.equal(batches.length, 1, 'one batch for all of them');
    assert.deepEqual(
      batches[0]!.map((o) => [o.viewKey, o.first.toISOString(), o.last.toISOString()]),
      [
        ['key-a', new Date(t(1)).toISOString(), new Date(t(5)).toISOString()],
        ['key-b', new Date(t(2)).toISOString(), new Date(t(2)).toISOString()],
      ],
    );
    assert.deepEqual(buffer.stats(), {
      accepted: 4,
      dropped: 0,
      recorded: 2,
      failed: 0,
      retried: 0,
      flushes: 1,
      pending: 0,
    });
  });

  it('past its bound, drops new keys and counts them; repeats of buffered keys still count', async () => {
    const { buffer, batches, reports } = recordingBuffer({ maxPending: 2 });
    assert.equal(buffer.add('a'), true);
    assert.equal(buffer.add('b'), true);
    assert.equal(buffer.add('c'), false);
    assert.equal(buffer.add('a'), true);
    assert.equal(buffer.stats().dropped, 1);
    await buffer.flush();
    assert.deepEqual(
      batches[0]!.map((o) => o.viewKey),
      ['a', 'b'],
    );
    assert.equal(reports[0]!.droppedSinceLastFlush, 1);
    // Room again after the flush.
    assert.equal(buffer.add('c'), true);
  });

  it('flushes on its own within the interval', async () => {
    const batches: BufferedOpen[][] = [];
    const buffer = createOpenBuffer({
      logger,
      flushIntervalMs: 10,
      write: async (batch) => {
        batches.push(batch);
        return batch.length;
      },
    });
    buffer.add('a');
    const deadline = Date.now() + 5_000;
    while (batches.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual(
      batches.map((b) => b.map((o) => o.viewKey)),
      [['a']],
    );
    await buffer.close();
  });

  it('times the next batch from the end of a slow write, coalescing the hits that came meanwhile', async () => {
    const intervalMs = 50;
    const writes: Array<{ keys: string[]; startedAt: number }> = [];
    let finishFirst: () => void = () => undefined;
    const buffer = createOpenBuffer({
      logger,
      flushIntervalMs: intervalMs,
      write: async (batch) => {
        writes.push({ keys: batch.map((o) => o.viewKey!), startedAt: Date.now() });
        // The first write is slower than several intervals (a busy database).
        if (writes.length === 1) await new Promise<void>((r) => (finishFirst = r));
        return batch.length;
      },
    });
    buffer.add('a');
    while (writes.length === 0) await new Promise((r) => setTimeout(r, 5));
    for (let i = 0; i < 5; i++) {
      buffer.add('b');
      buffer.add('c');
      await new Promise((r) => setTimeout(r, intervalMs));
    }
    assert.equal(writes.length, 1, 'nothing else is written while the slow write runs');
    const endedAt = Date.now();
    finishFirst();
    while (writes.length < 2) await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual(writes[1]!.keys, ['b', 'c'], 'ten hits meanwhile, one open per key');
    assert.ok(
      writes[1]!.startedAt - endedAt >= intervalMs - 1,
      `the next batch waited an interval after the slow one (${writes[1]!.startedAt - endedAt} ms)`,
    );
    await buffer.close();
  });
  it('close() writes what is left', async () => {
    const ok = recordingBuffer();
    ok.buffer.add('a');
    await ok.buffer.close();
    assert.equal(ok.batches.length, 1);
  });

  it('a failed batch goes back into the buffer and is written by a later flush, merged with new hits', async () => {
    let failNext = true;
    const batches: BufferedOpen[][] = [];
    const reports: FlushReport[] = [];
    const buffer = createOpenBuffer({
      logger,
      flushIntervalMs: 60_000,
      write: async (batch) => {
        if (failNext) {
          failNext = false;
          throw new Error('database down');
        }
        batches.push(batch);
        return batch.length;
      },
      onFlush: (r) => reports.push(r),
    });
    const t = (s: number) => Date.UTC(2030, 0, 1, 0, 0, s);
    buffer.add('a', t(1));
    buffer.addClick('email-1', t(2));
    await buffer.flush();
    assert.deepEqual(
      { failed: reports[0]!.failed, retried: reports[0]!.retried },
      { failed: 0, retried: 2 },
      'nothing lost: both kept for a retry',
    );
    assert.equal(buffer.stats().pending, 2);
    buffer.add('a', t(5));
    buffer.add('b', t(6));
    await buffer.flush();
    assert.deepEqual(
      batches[0]!.map((o) => [o.viewKey ?? o.emailId, o.first.getUTCSeconds(), o.last.getUTCSeconds()]),
      [
        ['a', 1, 5],
        ['b', 6, 6],
        ['email-1', 2, 2],
      ],
    );
    assert.deepEqual(
      { ...buffer.stats(), flushes: undefined },
      { accepted: 4, dropped: 0, recorded: 3, failed: 0, retried: 2, flushes: undefined, pending: 0 },
    );
  });

  it('a batch that fails at shutdown, or finds no room to go back, is counted lost, not thrown', async () => {
    const failing = recordingBuffer({ fail: true });
    failing.buffer.add('a');
    failing.buffer.add('b');
    await failing.buffer.close();
    assert.equal(failing.buffer.stats().failed, 2);
    assert.equal(failing.buffer.stats().recorded, 0);
    assert.equal(failing.reports[0]!.failed, 2);

    const reports: FlushReport[] = [];
    const full = createOpenBuffer({
      logger,
      flushIntervalMs: 60_000,
      maxPending: 2,
      write: async () => {
        // Arrives while the failing write is under way and takes one of the two places.
        full.add('c');
        throw new Error('database down');
      },
      onFlush: (r) => reports.push(r),
    });
    full.add('a');
    full.add('b');
    await full.flush();
    assert.deepEqual(
      { failed: reports[0]!.failed, retried: reports[0]!.retried, pending: full.stats().pending },
      { failed: 1, retried: 1, pending: 2 },
    );
  });

  it('buffers clicks beside pixel opens: one entry per email, marked clicked', async () => {
    const { buffer, batches } = recordingBuffer();
    const t = (s: number) => Date.UTC(2030, 0, 1, 0, 0, s);
    buffer.add('key-a', t(1));
    buffer.addClick('email-1', t(2));
    buffer.addClick('email-1', t(4));
    buffer.addClick('email-2', t(3));
    await buffer.flush();
    assert.deepEqual(
      batches[0]!.map((o) => [
        o.viewKey,
        o.emailId,
        o.clicked,
        o.first.getUTCSeconds(),
        o.last.getUTCSeconds(),
      ]),
      [
        ['key-a', undefined, undefined, 1, 1],
        [undefined, 'email-1', true, 2, 4],
        [undefined, 'email-2', true, 3, 3],
      ],
    );
    assert.equal(buffer.stats().accepted, 4);
  });

  it('nothing buffered: flush writes nothing', async () => {
    const { buffer, batches } = recordingBuffer();
    await buffer.flush();
    assert.equal(batches.length, 0);
  });
});
