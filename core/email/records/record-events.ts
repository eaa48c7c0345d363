import type { EmailRecord, TrackedEvent } from './record.ts';
import { STATUS_RANK } from './record.ts';

/**
 * The updates that move an email record on from provider and tracking events
 * (record-store.ts applies them): flags whatever the status, first times kept
 * with `$min`, the status raised and the latest open's `time` kept with `$max`
 * only, so events arriving out of order (the provider's often do) end in the
 * same record.
 */

/** What undoing an "outcome unknown" failure reads of a record. */
export const HANDED_OVER_FIELDS = {
  status_rank: 1,
  error_kind: 1,
  bounced_at: 1,
  opened: 1,
  delivered: 1,
} as const;

/** Failed because the outcome was unknown: a guess, which a sign of the provider having it undoes. */
export const wasGuessedFailed = (record: Partial<EmailRecord>) =>
  record.status_rank === STATUS_RANK.failed && record.error_kind === 'outcome_unknown';

/**
 * One event as one update: flags whatever the status, `$min` keeps the first
 * occurrence's time, `$max` moves the status and the latest open's time forward only.
 */
export function eventUpdate(event: TrackedEvent, at: Date) {
  const flags: Partial<EmailRecord> = { updated_at: at };
  const firsts: Partial<Record<'sent_at' | 'delivered_at' | 'opened_at' | 'bounced_at', Date>> = {};
  let raised: { status_rank: number; time?: Date };
  if (event === 'processed') {
    firsts.sent_at = at;
    raised = { status_rank: STATUS_RANK.sent };
  } else if (event === 'delivered') {
    flags.delivered = true;
    firsts.delivered_at = at;
    raised = { status_rank: STATUS_RANK.delivered };
  } else if (event === 'opened' || event === 'clicked') {
    const open = openUpdate(at, at, event === 'clicked');
    Object.assign(flags, open.$set);
    Object.assign(firsts, open.$min);
    raised = open.$max;
  } else {
    firsts.bounced_at = at;
    raised = { status_rank: STATUS_RANK.bounced };
  }
  return { $set: flags, $min: firsts, $max: raised };
}

/**
 * An open: flags whatever the status, `opened_at` the first open, `time` the
 * latest open (an older one arriving later leaves it), status at most raised to opened.
 */
export function openUpdate(first: Date, last: Date, clicked = false) {
  return {
    $set: { opened: true, updated_at: last, ...(clicked ? { clicked: true } : {}) },
    $min: { opened_at: first },
    $max: { time: last, status_rank: STATUS_RANK.opened },
  };
}
