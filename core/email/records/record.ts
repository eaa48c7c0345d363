import type { ErrorKind } from '../../errors.ts';
import type { Address } from '../addresses.ts';
import type { EmailStatusValue, SkippedRecipient } from '../email-schema.ts';

/**
 * One document of the `emails` collection: one per send, `_id` = email id.
 *
 * The status is stored as a rank, raised with `$max` in the same `{ _id }`
 * update that sets an event's flags: one atomic update on MongoDB, and the
 * final state does not depend on the order events arrive in:
 *
 *   pending 0 < sent 1 < delivered 2 < opened 3 < bounced 4 < failed 5
 *
 * So a bounce outranks an open whatever came first, and a late `sent` never
 * moves a delivered record back. `failed` is the exception to "highest wins":
 * it only replaces `pending`. Flags (`delivered`, `opened`, `clicked`, `time`)
 * are set whatever the status: an open of a bounced message is still an open.
 */
export interface EmailRecord {
  /** The email id (FerretDB answers only `_id` equalities without a scan). */
  _id: string;
  /** Same value as `_id` (so unique by it): readable in the raw data. */
  email_id: string;
  created_at: Date;
  updated_at: Date;
  subject: string;
  recipient_email: string;
  recipient_name: string;
  /** Whom the message went to (suppressed recipients left out). */
  recipients: { to: Address[]; cc: Address[]; bcc: Address[] };
  /** Recipients left out because they were on the company's suppression list. */
  suppressed?: SkippedRecipient[];
  /** The status as a rank (STATUS_RANK); the status string is derived, never stored. */
  status_rank: number;
  template_id: string;
  opened: boolean;
  delivered: boolean;
  clicked: boolean;
  /** The pixel's key: the email id + 144 random bits (view-key.ts). */
  view_key: string;
  resource_type_ref: string | null;
  resource_id_ref: string | null;
  /** The latest open ("set to the open time when an open is recorded"). */
  time: Date | null;
  company_id: string | null;
  organization_id: string | null;
  user_id: string | null;
  provider_id: string | null;
  /** The provider that took the message (`sendgrid`, `smtp`); absent until one did. */
  provider?: string;
  /** Why the send failed (or, while pending, why the last attempt failed). */
  error: string | null;
  error_kind: ErrorKind | null;
  /** A workflow step's exactly-once key (`<workflowId>:<step>`). */
  idempotency_key?: string;
  /** The `Idempotency-Key` of the HTTP request that created the record (request-idempotency.ts). */
  request_key?: string;
  /** How many requests carried that key: 1, plus one per replay. */
  request_key_seen?: number;
  /**
   * The attempt talking to the provider, written BEFORE the provider is
   * called and cleared once its outcome is known (sent, or a failure the
   * provider answered). Still set on a pending record means an attempt died
   * mid-call or saw no answer: the provider may have the message, so it is
   * not sent again blindly (send-pipeline.ts decides).
   */
  attempt_id?: string | null;
  attempt_started_at?: Date | null;
  /**
   * How many times a failed send was sent again because its workflow run was
   * reset (send-pipeline.ts): the one way a record leaves `failed`, besides an
   * unknown outcome the provider later proves.
   */
  resends?: number;
  /** Sent with a test-mode key: never reached a provider; seen only by test-mode callers. */
  test?: boolean;
  /**
   * A scheduled email's time (core/email/send/scheduled-sends.ts): it stays
   * pending until then, and the sweeper counts its pending time from then.
   */
  send_at?: Date;
  tags: string[];
  locale: string;
  language: string;
  /**
   * First time of each event. Absent until it happens (not null: `$min` against
   * a stored null would keep the null, BSON orders null before dates).
   */
  sent_at?: Date;
  delivered_at?: Date;
  opened_at?: Date;
  bounced_at?: Date;
}

/** Higher rank wins (`$max`), except `failed`, which only replaces `pending`. */
export const STATUS_RANK = {
  pending: 0,
  sent: 1,
  delivered: 2,
  opened: 3,
  bounced: 4,
  failed: 5,
} as const satisfies Record<EmailStatusValue, number>;

const STATUS_BY_RANK = Object.fromEntries(
  Object.entries(STATUS_RANK).map(([status, rank]) => [rank, status as EmailStatusValue]),
) as Record<number, EmailStatusValue | undefined>;

export function statusOf(record: Pick<EmailRecord, 'status_rank'>): EmailStatusValue {
  const status = STATUS_BY_RANK[record.status_rank];
  if (status === undefined) throw new Error(`email record with unknown status_rank ${record.status_rank}`);
  return status;
}

/** The provider accepted the message (sent, delivered, opened or bounced). */
export const isHandedOver = (record: Pick<EmailRecord, 'status_rank'>): boolean =>
  record.status_rank >= STATUS_RANK.sent && record.status_rank <= STATUS_RANK.bounced;

/**
 * Failed, and the provider certainly never took the message: no unknown
 * outcome, no sign of delivery, open or bounce. Sending it again cannot
 * duplicate it. Not a cancelled scheduled email: its owner asked that it
 * never be sent, so nothing reopens it.
 */
export const failedBeforeHandOver = (
  record: Pick<EmailRecord, 'status_rank' | 'error_kind' | 'delivered' | 'opened' | 'bounced_at'>,
): boolean =>
  record.status_rank === STATUS_RANK.failed &&
  record.error_kind !== 'outcome_unknown' &&
  record.error_kind !== 'cancelled' &&
  !record.delivered &&
  !record.opened &&
  !record.bounced_at;

/**
 * What tracking and provider events can say about a message. `processed`: the
 * provider accepted it (SendGrid's first event, seconds after acceptance).
 */
export type TrackedEvent = 'processed' | 'delivered' | 'opened' | 'clicked' | 'bounced';

/**
 * The status a record reached through acceptance and events alone: what a
 * record failed with an unknown outcome becomes once the provider proves it
 * had the message.
 */
export function handedOverRank(
  record: Partial<Pick<EmailRecord, 'bounced_at' | 'opened' | 'delivered'>>,
): number {
  if (record.bounced_at) return STATUS_RANK.bounced;
  if (record.opened) return STATUS_RANK.opened;
  if (record.delivered) return STATUS_RANK.delivered;
  return STATUS_RANK.sent;
}
