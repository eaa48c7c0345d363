import { Type, type Static } from '@sinclair/typebox';
import { EventTypeSchema } from '../../../core/webhooks/webhook-events.ts';
import type { DeliveryDoc } from '../../../core/webhooks/delivery-store.ts';

const Time = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

export const DeliverySchema = Type.Object({
  delivery_id: Type.String({ description: 'The event id: `webhook-id` of every attempt.' }),
  event: EventTypeSchema,
  status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
  attempts: Type.Integer({ minimum: 0 }),
  last_response_code: Type.Union([Type.Integer(), Type.Null()], {
    description: "The endpoint's last HTTP status; null when none came (timeout, refused address).",
  }),
  last_error: Type.Union([Type.String(), Type.Null()]),
  last_attempt_at: Time,
  next_attempt_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When the next attempt is due while pending; null once it ended.',
  }),
  created_at: Type.String({ format: 'date-time' }),
  finished_at: Time,
});
export type DeliveryView = Static<typeof DeliverySchema>;

export const DeliveryParams = Type.Object({
  id: Type.String({ format: 'uuid' }),
  delivery_id: Type.String({ pattern: '^msg_[0-9a-z_]{1,80}$' }),
});

export const DeliveryListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
  cursor: Type.Optional(Type.String({ maxLength: 500 })),
});

export const DeliveryListResponse = Type.Object({
  success: Type.Literal(true),
  data: Type.Array(DeliverySchema),
  nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as `cursor` for older ones.' }),
});
export const DeliveryResponse = Type.Object({ success: Type.Literal(true), delivery: DeliverySchema });

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function deliveryView(doc: DeliveryDoc): DeliveryView {
  return {
    delivery_id: doc.event_id,
    event: doc.type,
    status: doc.status,
    attempts: doc.attempts,
    last_response_code: doc.last_response_code,
    last_error: doc.last_error,
    last_attempt_at: iso(doc.last_attempt_at),
    next_attempt_at: doc.status === 'pending' ? iso(doc.next_attempt_at) : null,
    created_at: doc.created_at.toISOString(),
    finished_at: iso(doc.finished_at),
  };
}
