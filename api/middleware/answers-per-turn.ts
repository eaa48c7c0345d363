/**
 * Answers written together, once per turn of the event loop, instead of
 * each as soon as it is ready. Node reads every socket that became readable
 * in one poll phase, one callback after the other; a tracking answer is
 * ready a few microseconds after its request, so written at once, each
 * answer's socket write lands while the client (a browser's connection, a
 * proxy, a load balancer on the same host) has gone back to sleep after the
 * previous one, and the write pays the kernel for waking it again. Queued
 * here and written in a `setImmediate` (the check phase, right after the
 * poll phase), the answers of one turn go out back to back: the first write
 * wakes the client, the next find it awake.
 *
 * Measured with a bare `node:http` server doing 20 µs of work per request,
 * `wrk -t1 -c20` on the same machine: the kernel's time per answer fell from
 * 11–13 µs to 6 µs and the rate rose 22 %. An answer waits at most for the
 * rest of its turn (the other requests read in the same poll phase), never
 * for a timer.
 */
export type WriteThisTurn = (write: () => void) => void;

export function answersPerTurn(): WriteThisTurn {
  let queued: Array<() => void> = [];

  function writeAll(): void {
    const writes = queued;
    queued = [];
    // Each write catches its own failures (answerTracking): one never keeps the others back.
    for (const write of writes) write();
  }

  return function writeThisTurn(write) {
    if (queued.push(write) === 1) setImmediate(writeAll);
  };
}
