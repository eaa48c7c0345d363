import type { Priority } from '@temporalio/common';

/**
 * Which company a run's tasks are dispatched for. Temporal's task queues are
 * first in, first out unless tasks carry a fairness key: then the server keeps
 * one virtual queue per key and dispatches from them in turn (Temporal's task
 * queue fairness, `matching.enableFairness`, which infra/services.ts and
 * docker-compose.yml switch on). Without it one company's 1,000 scheduled
 * sends for one instant, or 300 triggers, queued every other company's runs
 * behind theirs (seconds to minutes); with it another company's run waits for
 * a turn, not for the backlog.
 *
 * Every run started for a company carries its id (a UUID, within the key's 64
 * bytes), and its activities and timers inherit it. A run without a company
 * (an anonymous signup send) shares the empty key, one turn among companies.
 * Dependency-free beyond a type, so workflow code uses it too.
 */
export const companyPriority = (companyId: string | undefined): { priority?: Priority } =>
  companyId ? { priority: { fairnessKey: companyId } } : {};
