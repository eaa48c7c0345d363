import { MailroomError } from '../../../core/errors.ts';
import { EndpointIdParams, RotatedSecretResponse } from '../../../core/webhooks/endpoint-schema.ts';
import { MAX_SIGNING_SECRETS } from '../../../core/webhooks/endpoint-store.ts';
import { defineRoute, failure } from '../../route.ts';
import { ENDPOINT_NOT_FOUND, MANAGE_WEBHOOKS, ownerOf, WEBHOOK_AUTH_FAILURES } from './webhook-auth.ts';

export const tooManyRotations = (max: number) =>
  `too many secret rotations: ${max} secrets sign already. try again when the oldest rotated-out one expires.`;
export const ROTATION_CONTENDED = "the endpoint's secret is being rotated by another request. try again.";

export const rotateSecretRoute = defineRoute({
  method: 'post',
  path: '/api/webhooks/:id/rotate-secret',
  operationId: 'rotateWebhookSecret',
  summary: 'A new signing secret; the previous one keeps signing beside it for 24 hours',
  description:
    'Until `previous_secret_expires_at` every delivery carries two signatures in `webhook-signature` ' +
    '(Standard Webhooks allows several), so a receiver can switch secrets without dropping events. ' +
    `At most ${MAX_SIGNING_SECRETS} secrets sign at once (the current one and those rotated out in the last 24 hours): ` +
    'one more rotation is 429 until the oldest of them expires.',
  tag: 'webhooks',
  auth: MANAGE_WEBHOOKS,
  params: EndpointIdParams,
  responses: {
    200: { description: 'The new secret (shown in this answer only).', schema: RotatedSecretResponse },
    400: failure('Invalid id.'),
    ...WEBHOOK_AUTH_FAILURES,
    404: failure('No such endpoint of this company.'),
    409: failure(`\`${ROTATION_CONTENDED}\``),
    429: failure(
      `\`${tooManyRotations(MAX_SIGNING_SECRETS)}\` (${MAX_SIGNING_SECRETS} secrets sign already; ` +
        '`Retry-After`: until the oldest rotated-out one stops signing).',
    ),
  },
  async handler(ctx, { webhooks }) {
    const rotated = await webhooks.endpoints.rotateSecret(ownerOf(ctx), ctx.valid.params.id);
    if (!rotated) throw new MailroomError('not_found', ENDPOINT_NOT_FOUND);
    if ('contended' in rotated) throw new MailroomError('conflict', ROTATION_CONTENDED);
    if ('tooManyUntil' in rotated)
      throw new MailroomError('rate_limited', tooManyRotations(MAX_SIGNING_SECRETS), {
        retryAfterSeconds: (rotated.tooManyUntil.getTime() - Date.now()) / 1000,
      });
    ctx.body = {
      success: true,
      secret: rotated.secret,
      previous_secret_expires_at: rotated.previousExpiresAt.toISOString(),
    };
  },
});
