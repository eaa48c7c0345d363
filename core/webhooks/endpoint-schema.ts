import { Type, type Static } from '@sinclair/typebox';
import { describePatchProblem } from '../email/email-messages.ts';
import { EventTypeSchema } from './webhook-events.ts';
import { ENDPOINT_URL_MAX_LENGTH } from './endpoint-url.ts';

/** Longest description of an endpoint. */
export const DESCRIPTION_MAX_LENGTH = 500;

const Url = Type.String({
  minLength: 1,
  maxLength: ENDPOINT_URL_MAX_LENGTH,
  description: 'http(s) URL the events are POSTed to.',
});
const Events = Type.Array(EventTypeSchema, { minItems: 1, maxItems: 10, uniqueItems: true });
const Description = Type.String({ maxLength: DESCRIPTION_MAX_LENGTH });

export const CreateEndpointBody = Type.Object(
  { url: Url, events: Events, description: Type.Optional(Description) },
  { additionalProperties: false },
);
export type CreateEndpointBody = Static<typeof CreateEndpointBody>;

export const UpdateEndpointBody = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    description: Type.Optional(Description),
    enabled: Type.Optional(Type.Boolean({ description: 'true re-enables an endpoint that was disabled.' })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateEndpointBody = Static<typeof UpdateEndpointBody>;

/** A PATCH body's problem: an empty one names what it may change. */
export const describeEndpointProblem = describePatchProblem(Object.keys(UpdateEndpointBody.properties));

export const EndpointIdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });

export const EndpointSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  url: Type.String(),
  events: Type.Array(EventTypeSchema),
  description: Type.String(),
  enabled: Type.Boolean(),
  disabled_reason: Type.Union([Type.String(), Type.Null()], {
    description: 'Why Mailroom disabled it (consecutive failed attempts), or null.',
  }),
  test: Type.Boolean({ description: 'Registered with a test-mode key: receives test-mode events only.' }),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});
export type EndpointView = Static<typeof EndpointSchema>;

const Secret = Type.String({
  pattern: '^whsec_',
  description: 'The signing secret (Standard Webhooks `whsec_…`): shown in this answer only.',
});

export const EndpointResponse = Type.Object({ success: Type.Literal(true), webhook: EndpointSchema });
export const CreatedEndpointResponse = Type.Object({
  success: Type.Literal(true),
  webhook: Type.Intersect([EndpointSchema, Type.Object({ secret: Secret })]),
});
export const EndpointListResponse = Type.Object({
  success: Type.Literal(true),
  data: Type.Array(EndpointSchema),
});
export const RotatedSecretResponse = Type.Object({
  success: Type.Literal(true),
  secret: Secret,
  previous_secret_expires_at: Type.String({
    format: 'date-time',
    description: 'Until then deliveries are signed with both secrets.',
  }),
});
