import type { Filter } from 'mongodb';
import { STATUS_RANK, type EmailRecord, type TrackedEvent } from './record.ts';
import type { LifecycleChange, LifecycleKind } from './lifecycle.ts';

/** What each kind of change leaves on the record, to tell afterwards whether it was written. */
const HAPPENED: Record<LifecycleKind, Filter<EmailRecord>> = {
  sent: { sent_at: { $exists: true } },
  delivered: { delivered: true },
  opened: { opened: true },
  clicked: { clicked: true },
  bounced: { bounced_at: { $exists: true } },
  failed: { status_rank: STATUS_RANK.failed },
  suppressed: { suppressed: { $exists: true } },
};

/**
 * The filter that holds on the record (besides its `_id`) once `change` was
 * written. A pixel open also names the key it presented: an open with a wrong
 * key was never recorded.
 */
export function happenedFilter(change: Pick<LifecycleChange, 'kind' | 'viewKey'>): Filter<EmailRecord> {
  return change.viewKey === undefined
    ? HAPPENED[change.kind]
    : { ...HAPPENED[change.kind], view_key: change.viewKey };
}

export function change(kind: LifecycleKind, emailId: string, at: Date, viewKey?: string): LifecycleChange {
  return viewKey === undefined ? { kind, emailId, at } : { kind, emailId, at, viewKey };
}

export function suppressedChange(emailId: string, suppressed: readonly unknown[] | undefined, at: Date) {
  return suppressed?.length ? [change('suppressed', emailId, at)] : [];
}

/** Provider and tracking events as changes (`processed` tells nothing `email.sent` did not). */
export function eventChanges(events: ReadonlyArray<{ emailId: string; event: TrackedEvent; at: Date }>) {
  return events.flatMap((e) => (e.event === 'processed' ? [] : [change(e.event, e.emailId, e.at)]));
}
