import { randomBytes } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import { EMAIL_STATUSES, type EmailStatusValue } from '../email/email-schema.ts';

/**
 * What an outbound webhook tells: one event type per thing that happened to an
 * email record (whatever moved it: an HTTP send, a workflow step, the pixel, a
 * click, a provider event) and per end of a workflow run a company triggered.
 */
export const EMAIL_EVENT_TYPES = [
  'email.sent',
  'email.delivered',
  'email.opened',
  'email.clicked',
  'email.bounced',
  'email.failed',
  'email.suppressed',
] as const;
export const WORKFLOW_EVENT_TYPES = ['workflow.completed', 'workflow.failed', 'workflow.cancelled'] as const;
export const EVENT_TYPES = [...EMAIL_EVENT_TYPES, ...WORKFLOW_EVENT_TYPES] as const;

export type EmailEventType = (typeof EMAIL_EVENT_TYPES)[number];
export type WorkflowEventType = (typeof WORKFLOW_EVENT_TYPES)[number];
export type EventType = (typeof EVENT_TYPES)[number];

export const EventTypeSchema = Type.Union(
  EVENT_TYPES.map((t) => Type.Literal(t)),
  { description: 'An event type an endpoint subscribes to.' },
);

/** `data` of every `email.*` event: the record as it was when the event was delivered. */
export const EmailEventData = Type.Object({
  email_id: Type.String({ format: 'uuid' }),
  status: Type.Unsafe<EmailStatusValue>(Type.String({ enum: [...EMAIL_STATUSES] })),
  recipient_email: Type.String(),
  template_id: Type.String(),
  subject: Type.String(),
  company_id: Type.Union([Type.String(), Type.Null()]),
  organization_id: Type.Union([Type.String(), Type.Null()]),
  user_id: Type.Union([Type.String(), Type.Null()]),
  tags: Type.Array(Type.String()),
  provider: Type.Union([Type.String(), Type.Null()]),
  provider_id: Type.Union([Type.String(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()], { description: 'Why it failed (`email.failed`).' }),
  suppressed: Type.Array(Type.String(), {
    description: 'Recipients left out because they are suppressed (`email.suppressed`).',
  }),
  test: Type.Boolean({ description: 'Sent with a test-mode key: never reached a provider.' }),
});
export type EmailEventData = Static<typeof EmailEventData>;

/** `data` of every `workflow.*` event. */
export const WorkflowEventData = Type.Object({
  workflow_name: Type.String(),
  workflow_id: Type.String(),
  run_id: Type.String(),
  status: Type.Union([Type.Literal('completed'), Type.Literal('failed'), Type.Literal('cancelled')]),
  company_id: Type.String(),
  organization_id: Type.Union([Type.String(), Type.Null()]),
  result: Type.Optional(Type.Unknown({ description: 'What the run returned (`workflow.completed`).' })),
  error: Type.Optional(Type.String({ description: 'Why the run failed (`workflow.failed`).' })),
});
export type WorkflowEventData = Static<typeof WorkflowEventData>;

/** The body of every delivery: `{ type, timestamp, data }`, as the Standard Webhooks specification suggests. */
export const webhookPayloadSchema = (type: EventType) =>
  Type.Object({
    type: Type.Literal(type),
    timestamp: Type.String({ format: 'date-time', description: 'When it happened.' }),
    data: type.startsWith('email.') ? EmailEventData : WorkflowEventData,
  });

export interface WebhookPayload {
  type: EventType;
  timestamp: string;
  data: EmailEventData | WorkflowEventData;
}

/** Events that happen at most once per email record or per workflow run. */
const ONCE: readonly EventType[] = [
  'email.sent',
  'email.delivered',
  'email.bounced',
  'email.suppressed',
  ...WORKFLOW_EVENT_TYPES,
];

/**
 * The event id, sent as `webhook-id` with every attempt of every delivery of
 * the event. Events that happen once per record or run get an id derived
 * from its id (`subject`: the email id or the run id), so `email.sent`
 * emitted twice, or a run's end emitted again by a retried activity, is
 * still one event; opens, clicks and failures, which may repeat, a random one.
 */
export function eventIdOf(type: EventType, subject?: string): string {
  if (subject !== undefined && ONCE.includes(type))
    return `msg_${subject.toLowerCase().replace(/[^0-9a-z]/g, '')}_${type.slice(type.indexOf('.') + 1)}`;
  return `msg_${randomBytes(16).toString('hex')}`;
}
