import type { EmailRecord } from './record.ts';

/**
 * The hook through which the record store tells the outside (outbound
 * webhooks, core/webhooks/) what happened to a record, without knowing who
 * listens. A change is announced BEFORE it is written (`intend`, awaited: the
 * announcement is in the database first) and confirmed after (`settled`, not
 * awaited): a crash between the two leaves an announcement whose `happenedFilter`
 * (lifecycle-changes.ts) says, read against the record, whether the change was made. So a
 * change that was written is never lost, and one that was not is never told.
 */
export type LifecycleKind = 'sent' | 'delivered' | 'opened' | 'clicked' | 'bounced' | 'failed' | 'suppressed';

export interface LifecycleChange {
  kind: LifecycleKind;
  emailId: string;
  at: Date;
  /** A pixel open: the key it presented (lifecycle-changes.ts happenedFilter). */
  viewKey?: string;
}

export interface Announcement {
  /**
   * The change was written (`true`), or certainly was not (`false`: nothing
   * matched). `record`: the record after the write, when the write answered it
   * (the listener then needs no read of its own).
   */
  settled(written: boolean, record?: EmailRecord): void;
  /** Somebody listens: a write that can answer the record after it cheaply should (settled). */
  wantsRecord?: boolean;
}

export interface LifecycleSink {
  /** Writes the announcements of `changes` that anybody listens to; resolves once they are stored. */
  intend(changes: LifecycleChange[]): Promise<Announcement>;
}

/** What nobody listens to. */
const UNHEARD: Announcement = { settled() {} };

/** No listener: nothing is written. */
export const NO_LIFECYCLE_SINK: LifecycleSink = {
  intend: async () => UNHEARD,
};

/**
 * `write` announced to `sink` first; `written` says from its result whether the change was made,
 * or gives the record after it (it was).
 * `early`: the same changes' announcement, made ahead (record-store.ts `announceSent`); if it
 * failed, they are announced again here.
 */
export async function announce<T>(
  sink: LifecycleSink,
  changes: LifecycleChange[],
  write: (announcement: Announcement) => Promise<T>,
  written: (result: T) => boolean | EmailRecord = () => true,
  early?: Promise<Announcement>,
): Promise<T> {
  if (changes.length === 0) return write(UNHEARD);
  const announcement = early ? await early.catch(() => sink.intend(changes)) : await sink.intend(changes);
  // A write that throws may or may not have been made: its announcement stays
  // unsettled, and is checked later against the record.
  const result = await write(announcement);
  const outcome = written(result);
  if (typeof outcome === 'boolean') announcement.settled(outcome);
  else announcement.settled(true, outcome);
  return result;
}
