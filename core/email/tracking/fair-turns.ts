import { MailroomError } from '../../errors.ts';

/**
 * Tasks run at most `concurrency` at a time, the waiting ones taking turns
 * by tenant: the next free slot goes to the tenant after the one served
 * last, whatever one tenant has queued. So a company that queues a hundred
 * slow renders delays its own, and another company's message waits at most
 * for the ones already running (html-render-pool.ts). A tenant may have
 * `maxWaiting` tasks waiting; one more is refused with 429 at once.
 */
export interface FairTurns {
  run<T>(tenant: string, task: () => Promise<T>): Promise<T>;
  /** Tasks running and waiting now (tests, metrics). */
  readonly size: { running: number; waiting: number };
}

export function createFairTurns(options: {
  concurrency: number;
  maxWaiting: number;
  /** The refusal's message (429). */
  refusal: string;
}): FairTurns {
  // Tenants with waiting tasks, in turn order: a Map iterates in insertion
  // order, so a served tenant with more to run goes back in at the end.
  const waiting = new Map<string, Array<() => void>>();
  let running = 0;
  let queued = 0;

  function next(): void {
    while (running < options.concurrency) {
      const first = waiting.entries().next();
      if (first.done) return;
      const [tenant, starts] = first.value;
      waiting.delete(tenant);
      const start = starts.shift()!;
      if (starts.length > 0) waiting.set(tenant, starts);
      queued--;
      running++;
      start();
    }
  }

  return {
    async run(tenant, task) {
      const starts = waiting.get(tenant);
      if ((starts?.length ?? 0) >= options.maxWaiting)
        throw new MailroomError('rate_limited', options.refusal, { retryAfterSeconds: 1 });
      if (running >= options.concurrency || waiting.size > 0) {
        await new Promise<void>((resolve) => {
          if (starts) starts.push(resolve);
          else waiting.set(tenant, [resolve]);
          queued++;
        });
      } else running++;
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
