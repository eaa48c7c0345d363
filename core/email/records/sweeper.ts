import type { Logger } from '../../logger.ts';
import { OUTCOME_UNKNOWN, abandonedSend } from '../email-messages.ts';
import type { RecordStore } from './record-store.ts';
import { startPeriodic, type PeriodicHandle } from './periodic.ts';

/**
 * The sweeper: no record stays `pending` forever. A record can be left
 * pending by a gateway that crashed mid-send, a `markSent` or `markFailed`
 * that failed while the database was down, or a workflow terminated between
 * its retries. Past PENDING_BOUND_MS (well beyond the longest a send can
 * legitimately take: an email step gives up after 5 minutes) it becomes
 * `failed`, with an error saying why:
 *
 *   - the record carries an attempt mark (an attempt may have handed the
 *     message over, see send-pipeline.ts): `outcome_unknown`, OUTCOME_UNKNOWN;
 *   - no mark: no attempt reached the provider: `transient`, "email send
 *     abandoned: …" (a later workflow run may send it again safely).
 *
 * A provider event for a message swept as outcome-unknown still corrects it
 * (record-store.ts). Every sweep is logged (`swept: true`) and handed to
 * `onSwept`, the hook for a counter.
 */

export const PENDING_BOUND_MS = 15 * 60_000;
/** How often the worker sweeps. */
export const SWEEP_INTERVAL_MS = 60_000;
/** Records finalised per sweep at most; the next sweep takes the rest. */
const SWEEP_BATCH = 200;

export type SweepOutcome = 'outcome_unknown' | 'abandoned';

export interface SweptRecord {
  email_id: string;
  outcome: SweepOutcome;
  /** How long it had been pending. */
  age_ms: number;
}

export async function sweepStuckPending(
  records: RecordStore,
  logger: Logger,
  boundMs: number = PENDING_BOUND_MS,
  now: Date = new Date(),
): Promise<SweptRecord[]> {
  const stuck = await records.listPendingBefore(new Date(now.getTime() - boundMs), SWEEP_BATCH);
  const swept: SweptRecord[] = [];
  for (const record of stuck) {
    const outcome: SweepOutcome = record.attempt_id ? 'outcome_unknown' : 'abandoned';
    const minutes = Math.round(boundMs / 60_000);
    const changed =
      outcome === 'outcome_unknown'
        ? await records.markFailed(record.email_id, OUTCOME_UNKNOWN, 'outcome_unknown')
        : await records.markFailed(record.email_id, abandonedSend(minutes), 'transient');
    // Not pending any more (an event or the attempt itself got there first): nothing to say.
    if (!changed) continue;
    const entry = { email_id: record.email_id, outcome, age_ms: now.getTime() - record.created_at.getTime() };
    swept.push(entry);
    logger.warn(
      { ...entry, swept: true, needs_attention: outcome === 'outcome_unknown' },
      'stuck pending email swept',
    );
  }
  return swept;
}

/**
 * Runs `sweep` every `intervalMs` (first run after one interval), one at a
 * time, at most 5% of the time (periodic.ts: on FerretDB the query is a
 * scan, seconds per 100,000 records); a failing sweep (database down) is
 * logged and tried again next time.
 */
export function startSweeper(options: {
  sweep: () => Promise<SweptRecord[]>;
  logger: Logger;
  intervalMs?: number;
  /** Called once per swept record: where a metrics counter is incremented. */
  onSwept?: (record: SweptRecord) => void;
}): PeriodicHandle {
  return startPeriodic({
    run: async () => {
      for (const record of await options.sweep()) options.onSwept?.(record);
    },
    intervalMs: options.intervalMs ?? SWEEP_INTERVAL_MS,
    logger: options.logger,
    failure: 'sweeping stuck pending emails failed',
  });
}
