import { MailroomError } from '../../errors.ts';

/**
 * Tasks run at most `concurrency` at a time, the waiting ones taking turns
 * by tenant: the next free slot goes to the tenant after the one served
 * last, whatever one tenant has queued. So a company that queues a hundred
 * slow renders delays its own, and another company's message waits at most
 * for the ones already running (html-render-pool.ts). A tenant may have
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
  start: () => void;
  timer: NodeJS.Timeout;
}

export function createFairTurns(options: {
  concurrency: number;
  maxWaiting: number;
  maxWaitMs: number;
  /** The refusal's message (429). */
  refusal: string;
}): FairTurns {
  // Tenants with waiting tasks, in turn order: a Map iterates in insertion
  // order, so a served tenant with more to run goes back in at the end.
  const waiting = new Map<string, Waiting[]>();
  let running = 0;
  let queued = 0;
  const refused = () =>
    new MailroomError('rate_limited', options.refusal, {
      retryAfterSeconds: Math.max(1, options.maxWaitMs / 1000),
    });

  function next(): void {
    while (running < options.concurrency) {
      const first = waiting.entries().next();
      if (first.done) return;
      const [tenant, entries] = first.value;
      waiting.delete(tenant);
      const entry = entries.shift()!;
      if (entries.length > 0) waiting.set(tenant, entries);
      clearTimeout(entry.timer);
      queued--;
      running++;
      entry.start();
    }
  }

  /** Waits for a turn, or rejects once `maxWaitMs` passed without one (the entry leaves the queue). */
  function turn(tenant: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
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
      if (running >= options.concurrency || waiting.size > 0) await turn(tenant);
      else running++;
      try {
        return await task();
      } finally {
        running--;
        next();
      }
    },
    get size() {
      return { running, waiting: queued };
    },
  };
}
