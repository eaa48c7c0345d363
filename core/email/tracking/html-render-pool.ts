import { availableParallelism } from 'node:os';
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { MailroomError } from '../../errors.ts';
import type { HtmlRenderRequest, RenderedHtml } from './html-render-task.ts';
import { HTML_TOO_COMPLEX, RENDER_QUEUE_FULL } from '../email-messages.ts';
import { createFairTurns } from './fair-turns.ts';
import { watchThreadBudget } from './thread-budget.ts';

export type { HtmlRenderRequest, RenderedHtml } from './html-render-task.ts';

/**
 * The threads that render callers' HTML (the `custom` template's
 * `html_body`): parsing it, converting it to the text part, finding its
 * links (html-render-task.ts). Off the event loop, because no bound on the
 * length of untrusted HTML bounds the time its parsing takes: 100,000 nested
 * `<div>` (500 KB) took htmlparser2 and html-to-text 6 s, 399,000 (2 MB)
 * 119 s, growing with the square of the depth. Here the gateway keeps
 * answering meanwhile, and each message gets HTML_RENDER_BUDGET_MS of a
 * thread's CPU time (thread-budget.ts): past it the thread is stopped (and
 * replaced) and the send is refused with 400 `html_body is too complex.`; so
 * is HTML whose parse outgrows a thread's memory limit.
 *
 * The budget counts from when a thread starts the message, not from when it
 * was queued, and only the thread's own CPU time: a message is never refused
 * because others were rendering or the machine was busy. Threads run at a
 * lower priority than the gateway (nice +10), so a busy render thread never
 * takes a core from the event loop.
 *
 * A pool starts its threads on first use (or at once with `warm`): two, and
 * up to one fewer than the cores while messages wait.
 *
 * Messages wait for a thread taking turns by company (fair-turns.ts): one
 * company queueing many slow messages delays its own, never another's
 * (measured before: 30 pathological messages from one company held another's
 * 20-byte one for 30 s). A company may have RENDER_WAITING_PER_TENANT
 * messages waiting (two full bulk batches), each for RENDER_MAX_WAIT_MS; one
 * more, or one that waited that long, is 429 and not sent.
 */

/**
 * A thread's time for one message: several times what 2 MB of ordinary
 * newsletter markup takes (docs/benchmarks.md), so what gets past it is
 * pathological, and a message within the bounds is answered within 2 s
 * either way (another thread is kept ready while a stopped one is replaced).
 */
export const HTML_RENDER_BUDGET_MS = 1500;
/** Threads kept ready: one can take the next message while a stopped one is replaced. */
const MIN_THREADS = 2;
/** Heap of one render thread: several times what the DOM of 2 MB of HTML needs (docs/benchmarks.md). */
const THREAD_HEAP_MB = 512;
/** A thread idle this long is stopped (MIN_THREADS are always kept). */
const IDLE_MS = 60_000;
/** Messages one company may have waiting for a render thread. */
export const RENDER_WAITING_PER_TENANT = 100;
/**
 * How long a message may wait for a render thread: then it is refused (429)
 * and not sent. A third of the default request deadline (90 s), so the
 * request is answered in time; measured before: 115 heavy messages at once
 * from one company, 47 answered 503 at the deadline and then sent all the same.
 */
export const RENDER_MAX_WAIT_MS = 30_000;

export interface HtmlRenderPool {
  /**
   * The rendered HTML, its text part and (when asked) its links; `validation`
   * error when too complex. `tenant`: whose turn it takes (the company).
   */
  render(request: HtmlRenderRequest, tenant: string): Promise<RenderedHtml>;
  /** Stops the threads (shutdown). */
  close(): Promise<void>;
}

export function createHtmlRenderPool(
  options: { warm?: boolean; budgetMs?: number; threads?: number; maxWaitMs?: number } = {},
): HtmlRenderPool {
  const budgetMs = options.budgetMs ?? HTML_RENDER_BUDGET_MS;
  const maxThreads = options.threads ?? Math.max(MIN_THREADS, availableParallelism() - 1);
  let pool: Piscina | undefined;
  const threads = () =>
    (pool ??= new Piscina({
      filename: new URL('./html-render-thread.cjs', import.meta.url).href,
      // Not the parent's flags: a test runner's `--import tsx` or `--test` mean nothing here.
      execArgv: [],
      minThreads: Math.min(MIN_THREADS, maxThreads),
      maxThreads,
      idleTimeout: IDLE_MS,
      niceIncrement: 10,
      resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB },
    }));
  if (options.warm) threads();
  const turns = createFairTurns({
    concurrency: maxThreads,
    // One thread always left for another company's message (fair-turns.ts).
    perTenant: Math.max(1, maxThreads - 1),
    maxWaiting: RENDER_WAITING_PER_TENANT,
    maxWaitMs: options.maxWaitMs ?? RENDER_MAX_WAIT_MS,
    refusal: RENDER_QUEUE_FULL,
  });

  async function renderNow(request: HtmlRenderRequest): Promise<RenderedHtml> {
    const budget = new AbortController();
    const { port1: started, port2 } = new MessageChannel();
    let stopWatching = () => {};
    started.once('message', (statPath: string | undefined) => {
      stopWatching = watchThreadBudget(statPath, budgetMs, () => budget.abort());
    });
    try {
      return (await threads().run(
        { ...request, started: port2 },
        { transferList: [port2], signal: budget.signal },
      )) as RenderedHtml;
    } catch (err) {
      if (budget.signal.aborted || (err as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY')
        throw new MailroomError('validation', HTML_TOO_COMPLEX);
      throw err;
    } finally {
      stopWatching();
      started.close();
    }
  }

  return {
    render: (request, tenant) => turns.run(tenant, () => renderNow(request)),
    async close() {
      await pool?.destroy();
      pool = undefined;
    },
  };
}
