import { EVENT_TYPES, webhookPayloadSchema } from '../../core/webhooks/index.ts';
import { JSON_TYPE, pascalCase, type Components, type Json } from './components.ts';

const SIGNATURE_HEADERS: Json[] = [
  ['webhook-id', 'The event id: the same on every attempt and replay of this event (deduplicate on it).'],
  ['webhook-timestamp', 'When this attempt was signed, in seconds since the epoch.'],
  [
    'webhook-signature',
    'Space-separated `v1,<base64 HMAC-SHA256>` signatures of `id.timestamp.body`, one per secret that signs now.',
  ],
].map(([name, description]) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema: { type: 'string' },
}));

/**
 * The OpenAPI 3.1 `webhooks` section: every event Mailroom POSTs to a
 * company's endpoints, with its body's shape and the Standard Webhooks headers.
 */
export function outboundWebhooks(components: Components): Record<string, Json> {
  return Object.fromEntries(
    EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          operationId: `on${pascalCase(type.replace('.', '-'))}`,
          summary: `\`${type}\` to a registered endpoint`,
          tags: ['webhooks'],
          parameters: SIGNATURE_HEADERS,
          requestBody: {
            required: true,
            content: {
              [JSON_TYPE]: {
                schema: components.name(
                  webhookPayloadSchema(type),
                  `${pascalCase(type.replace('.', '-'))}Event`,
                ),
              },
            },
          },
          responses: {
            '2XX': {
              description: 'Received: the delivery ends. Anything else (or no answer in time) is retried.',
            },
          },
        },
      },
    ]),
  );
}
