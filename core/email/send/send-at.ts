import { MailroomError } from '../../errors.ts';
import { SEND_AT_IN_PAST, SEND_AT_MALFORMED, SEND_AT_TOO_FAR } from '../email-messages.ts';

/** How far ahead an email may be scheduled: 30 days. */
export const MAX_SCHEDULE_AHEAD_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * RFC 3339 date-time, offset required (a time without one is ambiguous):
 * `2030-01-31T09:00:00+01:00`, `2030-01-31T08:00:00.250Z`. Lower-case `t`/`z`
 * are RFC 3339 too; a space for `T` is not. Second 60 (a leap second, which
 * RFC 3339 allows) is the instant the next second starts, as POSIX time counts.
 */
const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|([+-])(\d{2}):(\d{2}))$/;

const fail = (message: string) => new MailroomError('validation', message);

/**
 * The instant `raw` names, checked: well-formed (every field in range: V8's
 * Date.parse takes February 30 and moves it to March), in the future and at
 * most MAX_SCHEDULE_AHEAD_MS after `now`. 400 with the interface's style of
 * message otherwise.
 */
export function parseSendAt(raw: unknown, now: Date): Date {
  const m = typeof raw === 'string' ? RFC3339.exec(raw) : null;
  if (!m) throw fail(SEND_AT_MALFORMED);
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  // A leap second is read as the second before it, then moved on by one (below).
  const leap = second === 60;
  const wholeSecond = leap ? 59 : second;
  const local = new Date(Date.UTC(year, month - 1, day, hour, minute, wholeSecond));
  const inRange =
    local.getUTCFullYear() === year &&
    local.getUTCMonth() === month - 1 &&
    local.getUTCDate() === day &&
    local.getUTCHours() === hour &&
    local.getUTCMinutes() === minute &&
    local.getUTCSeconds() === wholeSecond;
  const offsetHours = Number(m[10] ?? 0);
  const offsetMinutes = Number(m[11] ?? 0);
  if (!inRange || offsetHours > 23 || offsetMinutes > 59) throw fail(SEND_AT_MALFORMED);
  const fraction = m[7] ? Math.floor(Number(m[7]) * 1000) : 0;
  const sign = m[9] === '-' ? -1 : 1;
  const at = new Date(
    local.getTime() + (leap ? 1000 : 0) + fraction - sign * (offsetHours * 60 + offsetMinutes) * 60_000,
  );
  if (at.getTime() <= now.getTime()) throw fail(SEND_AT_IN_PAST);
  if (at.getTime() - now.getTime() > MAX_SCHEDULE_AHEAD_MS) throw fail(SEND_AT_TOO_FAR);
  return at;
}

/** Whether a send body asks to be scheduled: it names `send_at` (whatever its value). */
export const asksToSchedule = (body: unknown): boolean =>
  typeof body === 'object' && body !== null && !Array.isArray(body) && Object.hasOwn(body, 'send_at');
