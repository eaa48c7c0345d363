import { Type } from '@sinclair/typebox';
import { StatusResponseSchema } from '../../../core/email/email-schema.ts';
import { defineRoute, failure } from '../../route.ts';
import { EMAIL_NOT_FOUND } from '../../../core/email/email-messages.ts';
import { UNAUTHORIZED } from '../../../core/identity.ts';

/** GET /api/email/status/:email_id → `{ success, data }`; 404 `email not found.` for unknown, malformed or foreign ids. */
export const statusRoute = defineRoute({
  method: 'get',
  path: '/api/email/status/:email_id',
  operationId: 'getEmailStatus',
  summary: "One email record's status",
  tag: 'email',
  auth: { scope: 'email:read', identityFromKey: true },
  // Not `format: uuid`: a malformed id is `email not found.` (404) like any unknown one.
  params: Type.Object({ email_id: Type.String({ description: 'The `email_id` a send answered (a UUID).' }) }),
  responses: {
    200: { description: 'The record.', schema: StatusResponseSchema },
    401: failure('No valid API key, or no valid `X-User-Id`.', [UNAUTHORIZED]),
    403: failure('The API key lacks the email:read scope.'),
    404: failure('Unknown, malformed or not visible to the caller.', [EMAIL_NOT_FOUND]),
  },
  async handler(ctx, { email }) {
    const data = await email.getStatus(ctx.valid.params.email_id, ctx.state.principal);
    ctx.body = { success: true, data };
  },
});
