import { Type, type Static } from '@sinclair/typebox';
import type { WorkflowDefinition } from './definition.ts';

/**
 * The longest `userId`: the welcome email records it as its
 * `resource_id_ref`, which a send bounds at 200 characters.
 */
export const USER_ID_MAX_LENGTH = 200;

/**
 * POST /api/workflow/send-welcome-email body. `userId` is the `_id` of a
 * document in `users` (a UUID is lower-cased; see activities/users.ts for how
 * it is looked up).
 */
export const SendWelcomeEmailInput = Type.Object(
  {
    userId: Type.String({
      minLength: 1,
      maxLength: USER_ID_MAX_LENGTH,
      description: 'the `_id` of the user in the `users` collection',
    }),
  },
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
  idFields: ['userId'],
  searchAttributes: {},
  templates: ['welcome'],
  description:
    "Fetches the user, sends the `welcome` email unless the user's `welcomeEmailSent` flag is set, then sets the flag.",
};
