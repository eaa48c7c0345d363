import { Type, type Static } from '@sinclair/typebox';

/** The listing and cancel answers of scheduled sends (api/routes/email/scheduled.ts). */

export const SCHEDULED_PAGE_MAX = 100;
export const SCHEDULED_PAGE_DEFAULT = 50;

/** One pending scheduled email in GET /api/email/scheduled. */
export const ScheduledEmailSchema = Type.Object({
  email_id: Type.String({ format: 'uuid' }),
  send_at: Type.String({ format: 'date-time' }),
  created_at: Type.String({ format: 'date-time' }),
  subject: Type.String(),
  recipient_email: Type.String(),
  recipient_name: Type.String(),
  template_id: Type.String(),
  status: Type.Literal('pending'),
});
export type ScheduledEmail = Static<typeof ScheduledEmailSchema>;

/** 200 of GET /api/email/scheduled. */
export const ScheduledListResponseSchema = Type.Object({
  success: Type.Literal(true),
  data: Type.Array(ScheduledEmailSchema),
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: Type.Union([Type.String(), Type.Null()]),
});

/** 200 of DELETE /api/email/scheduled/{email_id}. */
export const CancelScheduledResponseSchema = Type.Object({
  success: Type.Literal(true),
  email_id: Type.String({ format: 'uuid' }),
  status: Type.Literal('failed'),
  error: Type.Literal('cancelled'),
});
