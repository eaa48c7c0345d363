import { Type, type Static } from '@sinclair/typebox';
import type { WorkflowDefinition } from './definition.ts';

/** POST /api/workflow/send-welcome-email body. `userId` is the `_id` of a document in `users`. */
export const SendWelcomeEmailInput = Type.Object(
  { userId: Type.String({ minLength: 1, description: 'the `_id` of the user in the `users` collection' }) },
  { examples: [{ userId: 'user-1' }] },
);

export type SendWelcomeEmailInput = Static<typeof SendWelcomeEmailInput>;

/** What the workflow returns; the status endpoint shows it as `result.result`. */
export const SendWelcomeEmailResult = Type.Object({
  /** `already in progress`: another run for the same user holds the send (and will set the flag). */
  message: Type.Union([
    Type.Literal('welcome email sent'),
    Type.Literal('welcome email already sent'),
    Type.Literal('welcome email already in progress'),
  ]),
  userId: Type.String(),
  /** The email record's id (GET /api/email/status/{emailId}); absent when nothing was sent. */
  emailId: Type.Optional(Type.String({ format: 'uuid' })),
});

export type SendWelcomeEmailResult = Static<typeof SendWelcomeEmailResult>;

export const sendWelcomeEmail: WorkflowDefinition = {
  name: 'send-welcome-email',
  workflowType: 'sendWelcomeEmail',
  input: SendWelcomeEmailInput,
  result: SendWelcomeEmailResult,
  description:
    "Fetches the user, sends the `welcome` email unless the user's `welcomeEmailSent` flag is set, then sets the flag.",
};
