import { performance } from 'node:perf_hooks';
import { setImmediate as nextLoopTurn } from 'node:timers/promises';

/**
 * How long CPU work started from one event loop turn may run before it lets
 * the loop go round (answering other requests' I/O, /health among them).
 */
export const TURN_MS = 10;

/** When the work of the current loop turn began; undefined once the loop went round. */
let turnStarted: number | undefined;

/**
 * Resolves at once while the current loop turn has run less than TURN_MS of
 * such work, else on a later turn. For work that arrives as many pieces in
 * one turn (a bulk's items, validated and rendered one after another from a
 * single request's body): each piece awaits this first, so the loop is held
 * at most TURN_MS plus one piece, however many pieces there are. A send's
 * work is proportional to its size, but a bulk's template variables can grow
 * several-fold when escaped: without the turns, one bulk held the loop for
 * its whole rendering (0.55–0.73 s for 100 items of 84 KB of `<"&'`).
 *
 * The pieces that waited resume together on the next turn, and each checks
 * again, so they spread over as many turns as their work needs. When the
 * loop goes round on its own (the pieces await I/O), nothing waits: a piece
 * costs a clock read, and a turn an immediate.
 */
export async function takeTurn(priority: 'handover' | 'normal' = 'normal'): Promise<void> {
  for (;;) {
    const now = performance.now();
    if (turnStarted === undefined) {
      // A new turn goes to a waiting hand-over first: other pieces look again on the next one.
      if (priority === 'normal' && handoversWaiting > 0) {
        await nextLoopTurn();
        continue;
      }
      turnStarted = now;
      // Runs once the loop has gone round (after its I/O): a new turn begins.
      setImmediate(() => (turnStarted = undefined));
      return;
    }
    if (now - turnStarted < TURN_MS) return;
    if (priority === 'normal') {
      await nextLoopTurn();
      continue;
    }
    handoversWaiting++;
    try {
      await nextLoopTurn();
    } finally {
      handoversWaiting--;
    }
  }
}

/**
 * Hand-overs waiting for a turn. A send whose record already says it is
 * being handed over (its attempt's mark is written) takes a new turn before
 * the renders of sends that have not started: a process that dies between
 * the mark and the provider call leaves an email whose outcome is unknown,
 * so that time is kept short (measured with a burst of resumed sends:
 * 0.18–0.64 s behind the renders).
 */
let handoversWaiting = 0;
