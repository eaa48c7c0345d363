import { Type, type Static } from '@sinclair/typebox';

/** POST /api/workflow/send-welcome-email body. `userId` is the `_id` of a document in `users`. */
export const SendWelcomeEmailInput = Type.Object({
  userId: Type.String({ minLength: 1, description: 'the `_id` of the user in the `users` collection' }),
});

export type SendWelcomeEmailInput = Static<typeof SendWelcomeEmailInput>;

/** What the workflow returns; the status endpoint shows it as `result.result`. */
export interface SendWelcomeEmailResult {
  /** `already in progress`: another run for the same user holds the send (and will set the flag). */
  message: 'welcome email sent' | 'welcome email already sent' | 'welcome email already in progress';
  userId: string;
  /** The email record's id (GET /api/email/status/{emailId}); absent when nothing was sent. */
  emailId?: string;
}
