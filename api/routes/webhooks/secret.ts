import { MailroomError } from '../../../core/errors.ts';
import { EndpointIdParams, RotatedSecretResponse } from '../../../core/webhooks/endpoint-schema.ts';
import { defineRoute, failure } from '../../route.ts';
import { ENDPOINT_NOT_FOUND, MANAGE_WEBHOOKS, ownerOf, WEBHOOK_AUTH_FAILURES } from './webhook-auth.ts';

export const rotateSecretRoute = defineRoute({
  method: 'post',
  path: '/api/webhooks/:id/rotate-secret',
  operationId: 'rotateWebhookSecret',
  summary: 'A new signing secret; the previous one keeps signing beside it for 24 hours',
  description:
    'Until `previous_secret_expires_at` every delivery carries two signatures in `webhook-signature` ' +
    '(Standard Webhooks allows several), so a receiver can switch secrets without dropping events.',
  tag: 'webhooks',
  auth: MANAGE_WEBHOOKS,
  params: EndpointIdParams,
  responses: {
    200: { description: 'The new secret (shown in this answer only).', schema: RotatedSecretResponse },
    400: failure('Invalid id.'),
    ...WEBHOOK_AUTH_FAILURES,
    404: failure('No such endpoint of this company.'),
  },
  async handler(ctx, { webhooks }) {
    const rotated = await webhooks.endpoints.rotateSecret(ownerOf(ctx), ctx.valid.params.id);
    if (!rotated) throw new MailroomError('not_found', ENDPOINT_NOT_FOUND);
    ctx.body = {
      success: true,
      secret: rotated.secret,
      previous_secret_expires_at: rotated.previousExpiresAt.toISOString(),
    };
  },
});
