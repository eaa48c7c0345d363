import { MailroomError } from '../../errors.ts';
import { createKeyedSlots } from '../../keyed-slots.ts';

/**
 * Tasks run at most `concurrency` at a time, the waiting ones taking turns
 * by tenant: the next free slot goes to the tenant after the one served
 * last, whatever one tenant has queued. So a company that queues a hundred
 * slow renders delays its own, and another company's message waits at most
 * for the ones already running (html-render-pool.ts). A tenant may also hold
 * at most `perTenant` slots at once: with one fewer than all, a slot is
 * always left for another tenant, who then waits for nobody's render (it
 * waited up to a whole render budget, 1.5 s, before). A tenant may have
 * `maxWaiting` tasks waiting, and a task may wait `maxWaitMs`: one more, or
 * one that waited that long, is refused with 429 and never runs, so its
 * request is answered (and its email not sent) well before the request
 * deadline would answer 503 while the send went on.
 */
export interface FairTurns {
  run<T>(tenant: string, task: () => Promise<T>): Promise<T>;
  /** Tasks running and waiting now (tests, metrics). */
  readonly size: { running: number; waiting: number };
}

interface Waiting {
  /** Starts the task holding its tenant's slot, given back by calling `release`. */
  start: (release: () => void) => void;
  timer: NodeJS.Timeout;
}

export function createFairTurns(options: {
  concurrency: number;
  /** Slots one tenant may hold at once; default all of them. */
  perTenant?: number;
  maxWaiting: number;
  maxWaitMs: number;
  /** The refusal's message (429). */
  refusal: string;
}): FairTurns {
  // Tenants with waiting tasks, in turn order: a Map iterates in insertion
  // order, so a served tenant with more to run goes back in at the end.
  const waiting = new Map<string, Waiting[]>();
  /** The slots each tenant holds (at most `perTenant`). */
  const held = createKeyedSlots(options.perTenant ?? options.concurrency);
  let running = 0;
  let queued = 0;
  const refused = () =>
    new MailroomError('rate_limited', options.refusal, {
      retryAfterSeconds: Math.max(1, options.maxWaitMs / 1000),
    });

  function next(): void {
    while (running < options.concurrency) {
      // The first tenant in turn order with a slot left; the others keep their place.
      let chosen: { tenant: string; entries: Waiting[]; release: () => void } | undefined;
      for (const [tenant, entries] of waiting) {
        const release = held.take(tenant);
        if (release) {
          chosen = { tenant, entries, release };
          break;
        }
      }
      if (!chosen) return;
      const { tenant, entries, release } = chosen;
      waiting.delete(tenant);
      const entry = entries.shift()!;
      if (entries.length > 0) waiting.set(tenant, entries);
      clearTimeout(entry.timer);
      queued--;
      running++;
      entry.start(release);
    }
  }

  /** Waits for a turn, or rejects once `maxWaitMs` passed without one (the entry leaves the queue). */
  function turn(tenant: string): Promise<() => void> {
    return new Promise<() => void>((resolve, reject) => {
      const entries = waiting.get(tenant) ?? [];
      const entry: Waiting = {
        start: resolve,
        timer: setTimeout(() => {
          const list = waiting.get(tenant);
          const at = list?.indexOf(entry) ?? -1;
          if (!list || at < 0) return;
          list.splice(at, 1);
          if (list.length === 0) waiting.delete(tenant);
          queued--;
          reject(refused());
        }, options.maxWaitMs),
      };
      entries.push(entry);
      if (entries.length === 1) waiting.set(tenant, entries);
      queued++;
    });
  }

  return {
    async run(tenant, task) {
      if ((waiting.get(tenant)?.length ?? 0) >= options.maxWaiting) throw refused();
      const started = turn(tenant);
      next();
      const release = await started;
      try {
        return await task();
      } finally {
        running--;
        release();
        next();
      }
    },
    get size() {
      return { running, waiting: queued };
    },
  };
}
